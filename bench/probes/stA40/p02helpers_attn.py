# helper module of p02: masking attention probabilities in place
def drop_masked(probs, mask):
    probs.masked_fill_(mask, 0.0)
    return probs
