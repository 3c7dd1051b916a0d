#!/usr/bin/python3
"""Scores for formulate-v1 predictions (tools/eval/README.md explains each).

Pure Python + numpy, so tests/eval/ can check them on hand-made cases without a
model or a TeX installation.

    corpus_bleu(references, hypotheses)      im2markup / multi-bleu.perl style BLEU-4
    edit_distance(a, b)                      Levenshtein distance of two sequences
    normalized_edit_distance(truth, pred)    edit_distance / len(truth)
    binarize(gray)                           ink mask of a gray image (im2markup: <= 128)
    column_match(truth_gray, pred_gray)      (exact, exact ignoring blank columns)
"""

import collections
import math

import numpy as np


def ngram_counts(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(references, hypotheses, max_n=4):
    """Corpus-level BLEU as multi-bleu.perl computes it (im2markup's
    evaluate_bleu.sh): clipped n-gram precisions summed over the whole corpus,
    geometric mean of n = 1..max_n with equal weights, brevity penalty from the
    total lengths, no smoothing (any n with zero matches gives 0).

    references, hypotheses: lists of token lists, one reference per hypothesis.
    Returns a dict: bleu, precisions, brevity_penalty, hyp_len, ref_len."""
    if len(references) != len(hypotheses):
        raise ValueError("%d references for %d hypotheses" % (len(references), len(hypotheses)))
    matches = [0] * max_n
    totals = [0] * max_n
    hyp_len = ref_len = 0
    for ref, hyp in zip(references, hypotheses):
        hyp_len += len(hyp)
        ref_len += len(ref)
        for n in range(1, max_n + 1):
            h = ngram_counts(hyp, n)
            r = ngram_counts(ref, n)
            matches[n - 1] += sum(min(c, r[g]) for g, c in h.items())
            totals[n - 1] += max(len(hyp) - n + 1, 0)
    precisions = [m / t if t else 0.0 for m, t in zip(matches, totals)]
    bp = 1.0 if hyp_len > ref_len or hyp_len == 0 else math.exp(1.0 - ref_len / hyp_len)
    if hyp_len == 0 or min(precisions) == 0.0:
        bleu = 0.0
    else:
        bleu = bp * math.exp(sum(math.log(p) for p in precisions) / max_n)
    return {"bleu": bleu, "precisions": precisions, "brevity_penalty": bp,
            "hyp_len": hyp_len, "ref_len": ref_len}


def edit_distance(a, b):
    """Levenshtein distance (insert, delete, substitute all cost 1) between two
    sequences of hashable items."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def normalized_edit_distance(truth, pred):
    """edit_distance / len(truth); an empty truth scores 0 for an empty
    prediction and 1 otherwise. Not clipped: a long wrong prediction can
    score above 1."""
    if not truth:
        return 0.0 if not pred else 1.0
    return edit_distance(truth, pred) / len(truth)


def binarize(gray, threshold=128):
    """Ink mask (bool) of a gray image, ink = dark: im2markup's `<= 128`."""
    return np.asarray(gray) <= threshold


def _crop_ink_rows(mask):
    """The mask cut to its ink rows, and its height: columns are then compared
    top-aligned, as im2markup's bit strings are after its ink crop."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return [], 0
    mask = mask[rows[0]:rows[-1] + 1]
    return mask, mask.shape[0]


def column_match(truth_gray, pred_gray):
    """im2markup's image match on two renders: binarise, take every pixel column
    as a bit pattern (top-aligned at the first ink row, shorter image padded
    with blank rows at the bottom), then compare the column sequences.

    Returns (exact, exact_without_blank_columns): the first requires the same
    column sequence including blank columns (spacing), the second compares the
    sequences with blank columns removed (so a different space width still
    matches). A missing prediction image (None) matches nothing."""
    if pred_gray is None or truth_gray is None:
        return False, False
    a, ha = _crop_ink_rows(binarize(truth_gray))
    b, hb = _crop_ink_rows(binarize(pred_gray))
    if ha == 0 or hb == 0:
        same = ha == hb
        return same, same
    h = max(ha, hb)
    if ha < h:
        a = np.vstack([a, np.zeros((h - ha, a.shape[1]), bool)])
    if hb < h:
        b = np.vstack([b, np.zeros((h - hb, b.shape[1]), bool)])
    # Leading/trailing blank columns are margins, not spacing: drop them both ways.
    def trim(m):
        cols = np.flatnonzero(m.any(axis=0))
        return m[:, cols[0]:cols[-1] + 1]
    a, b = trim(a), trim(b)
    exact = a.shape == b.shape and bool((a == b).all())
    a_ink = a[:, a.any(axis=0)]
    b_ink = b[:, b.any(axis=0)]
    exact_ink = a_ink.shape == b_ink.shape and bool((a_ink == b_ink).all())
    return exact, exact_ink
