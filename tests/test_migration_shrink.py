"""The migration sweep's last-resort tiny config (``sweep_transformers.scaled_widths``, version 4
of ``sweep_reach.class_case``): widths the named shrink does not know are divided by one factor,
so the ratios a model checks (heads dividing a width, group norms dividing channels) survive,
while counts, lengths and image sizes stay as they are. Plain dicts: no library is needed."""

from __future__ import annotations

import pathlib
import sys

import pytest

pytest.importorskip("torch")

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def scaled_widths():
    sys.path.insert(0, str(BENCH))
    try:
        from migration.sweep_transformers import SCALE, scaled_widths
        yield scaled_widths, SCALE
    finally:
        sys.path.remove(str(BENCH))


def test_unknown_widths_are_scaled_by_one_factor(scaled_widths):
    scale, factor = scaled_widths
    got = scale({"emb_dim": 2048, "neck_hidden_sizes": [256, 512, 1024], "fusion_hidden_size": 256,
                 "upsample_initial_channel": 1536})
    assert got == {"emb_dim": 2048 // factor, "neck_hidden_sizes": [256 // factor, 512 // factor, 1024 // factor],
                   "fusion_hidden_size": 256 // factor, "upsample_initial_channel": 1536 // factor}


def test_counts_lengths_and_image_sizes_stay(scaled_widths):
    scale, _ = scaled_widths
    kept = {"max_position_embeddings": 4096, "num_hidden_layers": 2, "image_size": 384, "patch_size": 16,
            "sampling_rate": 24000, "kernel_size": 512, "max_source_positions": 1500, "use_cache": True,
            "hidden_act": "gelu", "num_labels": 1000, "n_fft": 1024, "hop_length": 256, "hidden_size": 32}
    assert scale(kept) == kept


def test_vocabularies_are_capped_and_group_norms_follow_the_channels(scaled_widths):
    scale, factor = scaled_widths
    got = scale({"vocab_size_per_layer_input": 262144, "encoder_hash_byte_group_vocab": 500002,
                 "num_groups": 32, "norm_num_groups": 32, "text_config": {"model_type": "x", "emb_dim": 1024}})
    assert got["vocab_size_per_layer_input"] == got["encoder_hash_byte_group_vocab"] == 512
    assert got["num_groups"] == got["norm_num_groups"] == 32 // factor
    assert got["text_config"]["emb_dim"] == 1024 // factor
