#!/usr/bin/python3
"""tests/eval: the evaluation's metric code (tools/eval/metrics.py) on hand-made
cases whose answers are worked out by hand. No model, no TeX needed."""

import math
import os
import sys
import unittest

import numpy as np

ROOT = os.environ.get("FE_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "eval"))
import metrics  # noqa: E402


class Bleu(unittest.TestCase):
    def test_identical_is_one(self):
        refs = [list("abcdef"), ["\\frac", "{", "1", "}", "{", "2", "}"]]
        r = metrics.corpus_bleu(refs, [list(t) for t in refs])
        self.assertAlmostEqual(r["bleu"], 1.0, places=12)
        self.assertEqual(r["brevity_penalty"], 1.0)

    def test_no_four_gram_is_zero(self):
        # unsmoothed corpus BLEU: no 4-gram match anywhere -> 0
        r = metrics.corpus_bleu([list("abcd")], [list("abce")])
        self.assertEqual(r["bleu"], 0.0)
        self.assertAlmostEqual(r["precisions"][0], 3 / 4)

    def test_hand_computed(self):
        # ref a b c d e f (6), hyp a b c d e x (6): matches 5/6, 4/5, 3/4, 2/3
        r = metrics.corpus_bleu([list("abcdef")], [list("abcdex")])
        want = math.exp((math.log(5 / 6) + math.log(4 / 5) + math.log(3 / 4) + math.log(2 / 3)) / 4)
        self.assertAlmostEqual(r["bleu"], want, places=12)

    def test_brevity_penalty(self):
        # hyp is a 4-token prefix of a 6-token ref: precisions all 1, bp = exp(1 - 6/4)
        r = metrics.corpus_bleu([list("abcdef")], [list("abcd")])
        self.assertAlmostEqual(r["bleu"], math.exp(1 - 6 / 4), places=12)

    def test_clipping(self):
        # "the the the the" vs "the cat": unigram precision clipped to 1/4
        r = metrics.corpus_bleu([["the", "cat"]], [["the"] * 4])
        self.assertAlmostEqual(r["precisions"][0], 1 / 4)

    def test_corpus_not_sentence_average(self):
        # pooled counts: a perfect 8-token pair and a 4-token pair with 0 4-gram
        # matches still give a non-zero corpus score
        refs = [list("abcdefgh"), list("wxyz")]
        hyps = [list("abcdefgh"), list("wxyq")]
        r = metrics.corpus_bleu(refs, hyps)
        p = [11 / 12, 9 / 10, 7 / 8, 5 / 6]
        self.assertAlmostEqual(r["bleu"], math.exp(sum(map(math.log, p)) / 4), places=12)

    def test_length_mismatch_raises(self):
        with self.assertRaises(ValueError):
            metrics.corpus_bleu([["a"]], [])


class EditDistance(unittest.TestCase):
    def test_known(self):
        self.assertEqual(metrics.edit_distance("kitten", "sitting"), 3)
        self.assertEqual(metrics.edit_distance("", "abc"), 3)
        self.assertEqual(metrics.edit_distance("abc", ""), 3)
        self.assertEqual(metrics.edit_distance("flaw", "lawn"), 2)
        self.assertEqual(metrics.edit_distance(["\\alpha", "x"], ["\\alpha", "x"]), 0)
        self.assertEqual(metrics.edit_distance(["\\frac", "{", "a", "}"], ["{", "a", "}"]), 1)

    def test_normalized(self):
        self.assertAlmostEqual(metrics.normalized_edit_distance(list("abcd"), list("abce")), 0.25)
        self.assertAlmostEqual(metrics.normalized_edit_distance(list("ab"), list("abcdef")), 2.0)
        self.assertEqual(metrics.normalized_edit_distance([], []), 0.0)
        self.assertEqual(metrics.normalized_edit_distance([], ["x"]), 1.0)


def canvas(h, w, strokes):
    """White gray image with black rectangles (y0, y1, x0, x1)."""
    img = np.full((h, w), 255, np.uint8)
    for y0, y1, x0, x1 in strokes:
        img[y0:y1, x0:x1] = 0
    return img


class ColumnMatch(unittest.TestCase):
    def test_identical(self):
        a = canvas(10, 20, [(2, 8, 3, 5), (2, 8, 10, 12)])
        self.assertEqual(metrics.column_match(a, a.copy()), (True, True))

    def test_margins_and_offset_do_not_matter(self):
        a = canvas(10, 20, [(2, 8, 3, 5), (2, 8, 10, 12)])
        b = canvas(14, 30, [(5, 11, 9, 11), (5, 11, 16, 18)])   # same ink, moved
        self.assertEqual(metrics.column_match(a, b), (True, True))

    def test_spacing_differs(self):
        a = canvas(10, 20, [(2, 8, 3, 5), (2, 8, 10, 12)])     # gap of 5 blank columns
        b = canvas(10, 20, [(2, 8, 3, 5), (2, 8, 12, 14)])     # gap of 7
        self.assertEqual(metrics.column_match(a, b), (False, True))

    def test_glyph_differs(self):
        a = canvas(10, 20, [(2, 8, 3, 5)])
        b = canvas(10, 20, [(2, 7, 3, 5)])                     # one row shorter
        self.assertEqual(metrics.column_match(a, b), (False, False))

    def test_threshold(self):
        a = canvas(10, 20, [(2, 8, 3, 5)])
        b = a.copy()
        b[9, 0] = 129        # light gray: not ink (im2markup counts <= 128)
        self.assertEqual(metrics.column_match(a, b), (True, True))
        b[9, 0] = 128        # now ink: a new row and column
        self.assertEqual(metrics.column_match(a, b), (False, False))

    def test_missing_or_blank(self):
        a = canvas(10, 20, [(2, 8, 3, 5)])
        self.assertEqual(metrics.column_match(a, None), (False, False))
        self.assertEqual(metrics.column_match(a, canvas(10, 20, [])), (False, False))


class EvalPlumbing(unittest.TestCase):
    """eval.py's glue on fake engine results (imports tools/data, needs no TeX)."""

    def setUp(self):
        sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
        import eval as ev
        self.ev = ev

    def test_spread_covers_the_split(self):
        self.assertEqual(self.ev.spread(10, None), list(range(10)))
        self.assertEqual(self.ev.spread(10, 20), list(range(10)))
        self.assertEqual(self.ev.spread(2000, 4), [0, 500, 1000, 1500])

    def test_crop_ink(self):
        img = canvas(40, 60, [(10, 20, 30, 35)])
        c = self.ev.crop_ink(img, margin=2)
        self.assertEqual(c.shape, (14, 9))
        self.assertIsNone(self.ev.crop_ink(canvas(5, 5, [])))

    def test_score_and_aggregate(self):
        info = {"font": "cm", "style": "inline", "size_pt": 10, "source": "stacks"}
        truth = ["\\frac", "{", "a", "}", "{", "b", "}"]
        s1 = self.ev.Sample(0, canvas(10, 10, [(2, 8, 2, 8)]), truth, info)
        s2 = self.ev.Sample(1, canvas(10, 10, [(2, 8, 2, 8)]), ["\\alpha", "x"], dict(info, font="sans"))

        def result(latex):
            return {"latex": latex, "confidence": {"mean": 0.9, "min": 0.5},
                    "hit_length_limit": False, "repetition_stopped": False,
                    "input": {"scale": 1.0}, "timings_ms": {"preprocess": 1, "encoder": 2, "decoder": 3}}
        # s1 exact; s2 engine printed "\alpha y": one substitution of two tokens
        recs = self.ev.score([s1, s2], [result("\\frac{a}{b}"), result("\\alpha y")],
                             [None, canvas(10, 10, [(2, 8, 2, 9)])], "t")
        self.assertTrue(recs[0][0]["exact"])
        self.assertTrue(recs[0][0]["img_exact"])
        self.assertFalse(recs[1][0]["exact"])
        self.assertAlmostEqual(recs[1][0]["ned"], 0.5)
        self.assertEqual(recs[1][0]["img_exact"], False)
        agg = self.ev.aggregate(recs)
        self.assertEqual(agg["n"], 2)
        self.assertAlmostEqual(agg["exact_match"], 0.5)
        self.assertAlmostEqual(agg["edit_distance"], 0.25)
        self.assertAlmostEqual(agg["image_match"], 0.5)
        by = self.ev.breakdowns(recs)
        self.assertEqual(sorted(by["font"]), ["cm", "sans"])
        self.assertAlmostEqual(by["font"]["cm"]["bleu4"], 1.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
