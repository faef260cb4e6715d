# helper module of p01: a U-Net style skip merge written with +=
def merge_skip(x, skip):
    x += skip
    return x
