#!/usr/bin/python3
"""tests/eval: tools/eval/calibrate.py's pieces without the data set: the
logistic fit on synthetic data with known coefficients, AUROC and flag rates
on hand-made cases, the threshold choice, and the metadata writer on a copy of
the tiny fixture model (tensors byte for byte, header aligned, and, when
FM_FORMULATE_CLI names the built formulate-cli, the engine reading the entry
back as its calibration)."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.environ.get("FE_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "eval"))
import calibrate  # noqa: E402

TINY = os.path.join(ROOT, "tests", "fixtures", "model", "tiny.safetensors")


def split_file(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    return n, json.loads(raw[8:8 + n].decode("utf-8")), raw[8 + n:]


class Fit(unittest.TestCase):
    def test_recovers_known_coefficients(self):
        rng = np.random.default_rng(7)
        x = np.column_stack([rng.normal(0.5, 0.2, 40000), rng.normal(-3.0, 2.0, 40000)])
        true_w, true_b = np.array([4.0, -0.5]), -1.0
        y = (rng.random(40000) < calibrate.sigmoid(x @ true_w + true_b)).astype(float)
        w, b = calibrate.fit_logistic(x, y, l2=1e-6)
        np.testing.assert_allclose(w, true_w, atol=0.25)
        self.assertAlmostEqual(b, true_b, delta=0.25)

    def test_constant_feature_gets_no_weight(self):
        rng = np.random.default_rng(3)
        x = np.column_stack([rng.normal(size=2000), np.ones(2000)])
        y = (x[:, 0] > 0).astype(float)
        w, _ = calibrate.fit_logistic(x, y, l2=1e-2)
        self.assertAlmostEqual(w[1], 0.0, places=6)
        self.assertGreater(w[0], 1.0)


class Measures(unittest.TestCase):
    def test_auroc(self):
        self.assertEqual(calibrate.auroc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]), 1.0)
        self.assertEqual(calibrate.auroc([0.9, 0.8, 0.2, 0.1], [False, False, True, True]), 0.0)
        self.assertEqual(calibrate.auroc([0.5, 0.5, 0.5, 0.5], [False, True, False, True]), 0.5)
        # right 0.6 beats wrong 0.4 and ties wrong 0.6: (1 + 0.5) / 2
        self.assertEqual(calibrate.auroc([0.6, 0.4, 0.6], [True, False, False]), 0.75)

    def test_flag_rates_and_threshold(self):
        score = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]
        right = [False, False, False, True, True, True]
        self.assertEqual(calibrate.flag_rates(score, right, 0.5), (0.0, 0.0))
        self.assertEqual(calibrate.flag_rates(score, right, 0.75), (0.0, 1 / 3))
        t = calibrate.choose_threshold(score, right)
        self.assertGreater(t, 0.3)
        self.assertLessEqual(t, 0.7)

    def test_reliability_bins(self):
        rows = calibrate.reliability([0.05, 0.15, 0.95, 1.0], [False, True, True, True], 10)
        self.assertEqual([r[2] for r in rows], [1, 1, 0, 0, 0, 0, 0, 0, 0, 2])
        self.assertEqual(rows[9][4], 1.0)


class Writer(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test-calibrate-")
        self.model = os.path.join(self.dir, "tiny.safetensors")
        shutil.copy(TINY, self.model)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def entry(self, bias):
        return {"version": 1, "target": "token-exact", "features": ["mean_prob", "stopped"],
                "weights": [2.0, -3.0], "bias": bias, "review_threshold": 0.7}

    def test_writes_and_replaces(self):
        _, header0, data0 = split_file(TINY)
        calibrate.write_calibration(self.model, self.entry(0.25))
        calibrate.write_calibration(self.model, self.entry(-0.5))  # replaces, not appends
        n, header, data = split_file(self.model)
        self.assertEqual(data, data0)
        self.assertEqual((8 + n) % 8, 0)
        meta = header.pop("__metadata__")
        self.assertEqual(json.loads(meta.pop(calibrate.METADATA_KEY)), self.entry(-0.5))
        self.assertEqual(meta, header0.pop("__metadata__"))
        self.assertEqual(header, header0)

    def test_refuses_other_files(self):
        other = os.path.join(self.dir, "other.safetensors")
        hjson = b'{"__metadata__":{"format":"pt"}}'
        with open(other, "wb") as f:
            f.write(struct.pack("<Q", len(hjson)) + hjson)
        with self.assertRaises(SystemExit):
            calibrate.write_calibration(other, self.entry(0.0))

    @unittest.skipUnless(os.environ.get("FM_FORMULATE_CLI"), "FM_FORMULATE_CLI not set")
    def test_engine_reads_it(self):
        from PIL import Image
        calibrate.write_calibration(self.model, self.entry(0.25))
        png = os.path.join(self.dir, "blob.png")
        img = np.full((32, 96), 255, np.uint8)
        img[8:24, 10:86:12] = 0
        Image.fromarray(img).save(png)
        out = subprocess.run([os.environ["FM_FORMULATE_CLI"], "recognize", "--json", "--model",
                              self.model, "--device", "cpu", "--threads", "1", "--em-px", "20",
                              png], check=True, stdout=subprocess.PIPE).stdout
        doc = json.loads(out)
        self.assertEqual(doc["confidence_calibration"],
                         {"target": "token-exact", "review_threshold": 0.7})
        conf = doc["results"][0]["confidence"]
        self.assertTrue(conf["calibrated"])
        f = conf["features"]
        want = calibrate.sigmoid(0.25 + 2.0 * f["mean_prob"] - 3.0 * f["stopped"])
        self.assertAlmostEqual(conf["value"], want, places=5)


if __name__ == "__main__":
    unittest.main(verbosity=2)
