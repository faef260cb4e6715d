# helper for case 908: src/train/monkey_patch_forward.py of 2U1/Qwen-VL-Series-Finetune before PR #178,
# qwen2_5_mixed_modality_forward reduced to the image path: embed the tokens, run the vision tower, write the image
# features into the image-token rows of the embeddings with index_copy_, then the decoder and the shifted LM loss.
# The text-only dummy-image branch, the video branch, rope indices and cache handling are dropped.
import torch
import torch.nn.functional as F


def qwen2_5_mixed_modality_forward(
    self,
    input_ids=None,
    inputs_embeds=None,
    labels=None,
    pixel_values=None,
    image_grid_thw=None,
):
    if inputs_embeds is None:
        inputs_embeds = self.model.embed_tokens(input_ids)

        if pixel_values is not None:
            pixel_values = pixel_values.type(self.visual.dtype)
            image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw)
            n_image_tokens = (input_ids == self.config.image_token_id).sum().item()
            n_image_features = image_embeds.shape[0]
            if n_image_tokens != n_image_features:
                raise ValueError(
                    f"Image features and image tokens do not match: tokens: {n_image_tokens}, features {n_image_features}"
                )

            mask_img = (input_ids == self.config.image_token_id)
            if mask_img.any():
                B, T, H = inputs_embeds.shape
                b_idx, t_idx = mask_img.nonzero(as_tuple=True)
                row_idx = (b_idx * T + t_idx).to(inputs_embeds.device)

                img = image_embeds.to(inputs_embeds.device, dtype=inputs_embeds.dtype)
                flat = inputs_embeds.view(-1, H)
                flat.index_copy_(0, row_idx, img)
                inputs_embeds = flat.view(B, T, H)

    hidden_states = self.model(inputs_embeds=inputs_embeds)
    logits = self.lm_head(hidden_states)

    loss = None
    if labels is not None:
        logits = logits.float()
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, self.config.vocab_size), shift_labels.view(-1),
                               ignore_index=-100)
    return loss, logits
