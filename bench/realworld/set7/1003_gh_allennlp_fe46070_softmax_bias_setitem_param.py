# source: https://github.com/allenai/allennlp/commit/fe460702f76b91f50c56f6973bff74768ae8fe7b
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# AllenNLP, tests/modules/sampled_softmax_loss_test.py,
# test_sampled_equals_unsampled_when_biased_against_non_sampled_positions: to make the full softmax comparable with the
# sampled one, the test biases out every word that is not a fake sample, `unsampled_softmax.softmax_b[i] = -10000`,
# an indexed write into `softmax_b`, an nn.Parameter (a leaf that requires grad); with newer PyTorch this raises "a view
# of a leaf Variable that requires grad is being used in an in-place operation". Commit fe460702f "Fix in-place op on
# leaf-tensor view": `unsampled_softmax.softmax_b.data[i] = -10000`.
# Stand-ins: SoftmaxLoss (allennlp/modules/softmax_loss.py) is copied below with torch instead of numpy; 1000 words
# instead of 10000 and the fake samples scaled down; the SampledSoftmaxLoss half of the comparison (numpy-based
# sampling) is left out, so compute() returns the full-softmax loss, its gradients and the biased parameters.
import torch


class SoftmaxLoss(torch.nn.Module):
    def __init__(self, num_words: int, embedding_dim: int) -> None:
        super().__init__()
        self.tie_embeddings = False
        self.softmax_w = torch.nn.Parameter(
            torch.randn(embedding_dim, num_words) / embedding_dim ** 0.5
        )
        self.softmax_b = torch.nn.Parameter(torch.zeros(num_words))

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        probs = torch.nn.functional.log_softmax(
            torch.matmul(embeddings, self.softmax_w) + self.softmax_b, dim=-1
        )
        return torch.nn.functional.nll_loss(probs, targets.long(), reduction="sum")


def compute():
    torch.manual_seed(0)
    unsampled_softmax = SoftmaxLoss(num_words=1000, embedding_dim=12)

    FAKE_SAMPLES = [10, 20, 30, 40, 50, 60, 70, 80, 90, 999]

    # bias out the unsampled terms:
    for i in range(1000):
        if i not in FAKE_SAMPLES:
            unsampled_softmax.softmax_b[i] = -10000

    unsampled_softmax.train()

    # sequence_length, embedding_dim
    embedding = torch.rand(100, 12)
    targets = torch.tensor(FAKE_SAMPLES).repeat(10)

    full_loss = unsampled_softmax(embedding, targets)
    full_loss.backward()
    return {
        "full_loss": full_loss.detach(),
        "softmax_w.grad": unsampled_softmax.softmax_w.grad,
        "softmax_b": unsampled_softmax.softmax_b.detach().clone(),
    }


if __name__ == "__main__":
    compute()
