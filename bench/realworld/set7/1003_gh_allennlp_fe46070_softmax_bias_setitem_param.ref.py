# reference fix for 1003: commit fe460702f, the bias written through `.data`.
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
            unsampled_softmax.softmax_b.data[i] = -10000

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
