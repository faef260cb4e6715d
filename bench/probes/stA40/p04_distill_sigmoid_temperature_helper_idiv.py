# source: own knowledge (distillation losses that scale a student's sigmoid scores in a utils file)
# error: A
# sigmoid saves its result; the helper divides it in place.
import torch
import torch.nn as nn
import p04helpers_postproc as post


def compute():
    torch.manual_seed(0)
    student = nn.Linear(5, 3)
    x = torch.randn(6, 5)
    s = torch.sigmoid(student(x))
    s = post.apply_temperature(s, 2.0)
    loss = (s - 0.5).pow(2).mean()
    loss.backward()


if __name__ == "__main__":
    compute()
