import torch


def main():
    return torch.zeros(1)
