"""Box overlap and score.py's matching (same kind, IoU >= 0.5, greedy by IoU),
shared by the detection-miss tools (miss-kinds.py, false-inline.py).
Boxes are [x0, y0, x1, y1]."""


def inter(a, b):
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))


def area(a):
    return (a[2] - a[0]) * (a[3] - a[1])


def iou(a, b):
    i = inter(a, b)
    u = area(a) + area(b) - i
    return i / u if u > 0 else 0


def greedy_match(truth, preds, page, kind, box):
    """(matched truth indices, matched prediction indices); page, kind and box
    read a region's page, kind and box."""
    pairs = sorted(((iou(box(t), box(p)), i, j) for i, t in enumerate(truth) for j, p in enumerate(preds)
                    if page(t) == page(p) and kind(t) == kind(p) and iou(box(t), box(p)) >= 0.5), reverse=True)
    mt, mp = set(), set()
    for _, i, j in pairs:
        if i not in mt and j not in mp:
            mt.add(i)
            mp.add(j)
    return mt, mp
