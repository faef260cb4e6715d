"""Reduced torch_fourier_slice (teamtomo monorepo, packages/primitives/torch-fourier-slice, snapshot 2026-01):
project_3d_to_2d and extract_central_slices_rfft_3d as in the package, with the einops / torch_grid_utils /
torch_image_interpolation helpers replaced by small torch equivalents (_central_slice_fftfreq_grid,
_fftfreq_to_dft_coordinates, and a trilinear sample_image_3d built on F.grid_sample). fftfreq_max and the
near-zero-x conjugation tie-break are left out."""
import torch
import torch.nn.functional as F


def _central_slice_fftfreq_grid(volume_shape, rfft=True, fftshift=True, device=None):
    # (h, w, 3) zyx DFT sample frequencies of the central xy slice of an fftshifted rfft
    h, w = volume_shape[-2:]
    fy = torch.fft.fftshift(torch.fft.fftfreq(h, device=device))
    fx = torch.fft.rfftfreq(w, device=device)
    yy, xx = torch.meshgrid(fy, fx, indexing="ij")
    return torch.stack([torch.zeros_like(yy), yy, xx], dim=-1)


def _fftfreq_to_dft_coordinates(frequencies, image_shape, rfft=True):
    n = torch.as_tensor(image_shape, dtype=frequencies.dtype, device=frequencies.device)
    center = torch.as_tensor([image_shape[0] // 2, image_shape[1] // 2, 0], dtype=frequencies.dtype,
                             device=frequencies.device)
    return frequencies * n + center


def sample_image_3d(image, coordinates):
    # trilinear sampling of a complex (d, h, w) array at (..., 3) zyx array coordinates, zeros outside
    d, h, w = image.shape
    size = torch.as_tensor([d - 1, h - 1, w - 1], dtype=coordinates.dtype, device=coordinates.device)
    grid = (coordinates / size * 2 - 1).flip(-1).reshape(1, 1, 1, -1, 3)
    channels = torch.stack([image.real, image.imag])[None]  # (1, 2, d, h, w)
    out = F.grid_sample(channels, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
    out = out.reshape(2, *coordinates.shape[:-1])
    return torch.complex(out[0], out[1])


def extract_central_slices_rfft_3d(volume_rfft, image_shape, rotation_matrices, zyx_matrices=False,
                                   x_tolerance=1e-8, rot_tolerance=1e-8):
    rotation_matrices = rotation_matrices.to(torch.float32)

    if rot_tolerance is not None:
        near_zero_elements = torch.abs(rotation_matrices) < rot_tolerance
        rotation_matrices[near_zero_elements] = 0.0

    if not zyx_matrices:
        rotation_matrices = torch.flip(rotation_matrices, dims=(-2, -1))

    freq_grid = _central_slice_fftfreq_grid(volume_shape=image_shape, rfft=True, fftshift=True,
                                            device=volume_rfft.device)  # (h, w, 3) zyx coords
    stack_shape = tuple(rotation_matrices.shape[:-2])
    rfft_shape = freq_grid.shape[-3], freq_grid.shape[-2]
    output_shape = (*stack_shape, *rfft_shape)

    freq_grid_mask = torch.ones(size=rfft_shape, dtype=torch.bool, device=volume_rfft.device)
    valid_coords = freq_grid.reshape(-1, 3)[..., None]  # (b, zyx, 1)
    rotation_matrices = rotation_matrices[..., None, :, :]  # (..., 1, 3, 3)

    rotated_coords = rotation_matrices @ valid_coords  # (..., b, zyx, 1)
    rotated_coords = rotated_coords[..., 0]

    # Flip coordinates which we absolutely know end in the redundant (-x) half
    conjugate_mask = rotated_coords[..., 2] < -x_tolerance
    rotated_coords[conjugate_mask, ...] *= -1

    rotated_coords = _fftfreq_to_dft_coordinates(frequencies=rotated_coords, image_shape=image_shape, rfft=True)
    samples = sample_image_3d(image=volume_rfft, coordinates=rotated_coords)  # (...) rfft

    # take complex conjugate of values from redundant half transform
    samples[conjugate_mask] = torch.conj(samples[conjugate_mask])

    projection_image_dfts = torch.zeros(output_shape, device=volume_rfft.device, dtype=volume_rfft.dtype)
    projection_image_dfts[..., freq_grid_mask] = samples
    return projection_image_dfts


def project_3d_to_2d(volume, rotation_matrices, pad_factor=2.0, zyx_matrices=False):
    d, h, w = volume.shape[-3:]
    if pad_factor > 1.0:
        p = int((volume.shape[-1] * (pad_factor - 1.0)) // 2)
        volume = F.pad(volume, pad=[p] * 6)
    volume_shape = tuple(volume.shape[-3:])

    dft = torch.fft.fftshift(volume, dim=(-3, -2, -1))
    dft = torch.fft.rfftn(dft, dim=(-3, -2, -1))
    dft = torch.fft.fftshift(dft, dim=(-3, -2))

    projections = extract_central_slices_rfft_3d(volume_rfft=dft, image_shape=volume_shape,
                                                 rotation_matrices=rotation_matrices, zyx_matrices=zyx_matrices)

    projections = torch.fft.ifftshift(projections, dim=(-2,))
    projections = torch.fft.irfftn(projections, dim=(-2, -1))
    projections = torch.fft.ifftshift(projections, dim=(-2, -1))
    if pad_factor > 1.0:
        projections = projections[..., p:-p, p:-p]
    return projections
