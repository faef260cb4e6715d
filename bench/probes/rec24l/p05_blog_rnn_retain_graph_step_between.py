# source: https://e-com-net.com/article/1641037187019497472.htm
# error: A
# The hidden state carried between steps keeps the previous step's graph; after
# opt.step() changed the RNN weights, backward(retain_graph=True) walks into that graph.
import torch


def compute():
    torch.manual_seed(0)
    rnn = torch.nn.RNN(input_size=1, hidden_size=1, num_layers=1)
    train_set_x = torch.tensor([[[1]], [[2]], [[3]], [[4]], [[5]]], dtype=torch.float32)
    train_set_y = torch.tensor([[[2]], [[4]], [[6]], [[8]], [[10]]], dtype=torch.float32)
    h0 = torch.tensor([[0]], dtype=torch.float32)
    h_cur = h0
    loss = torch.nn.MSELoss()
    opt = torch.optim.Adadelta(rnn.parameters(), lr=0.01)
    for i in range(5):
        opt.zero_grad()
        train_output, h_next = rnn(train_set_x[i], h_cur)
        rnn_loss = loss(train_output, train_set_y[i])
        rnn_loss.backward(retain_graph=True)
        opt.step()
        h_cur = h_next
    return {n: p.detach() for n, p in rnn.named_parameters()}


if __name__ == "__main__":
    compute()
