#!/usr/bin/python3
"""Dry run of the GPU training kit (tools/train/device/) on the CPU with tiny
data, so the kit works the day a GPU is lent (issue 13 section 1): pack two
slices, run two resuming calls, then a third on a "lost" (fresh) machine that
starts from the export the second call returned."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e} (tools/setup-deps test installs python3-torch and python3-numpy)")
    sys.exit(77)

ROOT = os.environ.get("FE_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = sys.executable
KIT = os.path.join(ROOT, "tools", "train", "device")
SMOKE_ARGS = ("--device cpu --threads 1 --max-tokens 16 --batch-pixels 60000 --max-batch 8 --warmup-steps 2 "
              "--val-samples 16 --val-decode 4 --log-steps 1 --eval-steps 2 --scale-jitter 0.25")


def run(*cmd):
    r = subprocess.run([PY, *cmd], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:])
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
    return r.stdout


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)
    print("ok: " + what)


def step(tmp, slice_dir, out, state, extra=()):
    run(os.path.join(KIT, "step.py"), slice_dir, "--out", out, "--state", state, "--preset", "small",
        "--minutes", "0.002", "--total-min", "1", "--jobs", "2", "--init", os.path.join(tmp, "init.safetensors"),
        "--train-args", SMOKE_ARGS, *extra)
    with open(os.path.join(out, "kit.json")) as f:
        return json.load(f)


def main():
    tmp = tempfile.mkdtemp(prefix="fm-kit-")
    try:
        data = os.path.join(tmp, "data")
        run(os.path.join(ROOT, "tools", "train", "make_smoke_data.py"), data, "--train", "96", "--val", "40")
        # a second train shard, so two slices carry different data
        for part in (".idx.npy", ".img", ".tok"):
            shutil.copy(os.path.join(data, "train-00000" + part), os.path.join(data, "train-00001" + part))
        with open(os.path.join(data, "meta.json")) as f:
            meta = json.load(f)
        meta["splits"]["train"]["shards"].append("train-00001")
        with open(os.path.join(data, "meta.json"), "w") as f:
            json.dump(meta, f)

        dev = os.path.join(tmp, "device")
        for k in (0, 1):
            run(os.path.join(KIT, "pack.py"), "--data", data, "--out", dev, "--slice", str(k),
                "--shards-per-slice", "1", "--val-samples", "24", "--jobs", "1")
        with open(os.path.join(dev, "slice-1", "pack.json")) as f:
            p1 = json.load(f)
        check(p1["train_shards"] == ["train-00001"] and p1["train_samples"] == 96 and p1["val_samples"] == 24,
              "slice 1 carries the second train shard and a 24-sample val cut")
        check(sorted(os.listdir(os.path.join(dev, "slice-0"))) ==
              sorted(["meta.json", "pack.json", "vocab.json"] +
                     [n + p + ".xz" for n in ("train-00000", "val-00000") for p in (".idx.npy", ".img", ".tok")]),
              "slice 0 holds only xz shards and metadata")

        state = os.path.join(tmp, "state")
        k1 = step(tmp, os.path.join(dev, "slice-0"), os.path.join(tmp, "out1"), state)
        check(not k1["resumed"] and k1["init_from"] is None and k1["step"] >= 1, "call 1 trains from scratch")
        for name in ("formulate-small.safetensors", "log.csv", "train-stdout.txt", "kit.json"):
            check(os.path.getsize(os.path.join(tmp, "out1", name)) > 0, f"call 1 returns {name}")
        k2 = step(tmp, os.path.join(dev, "slice-1"), os.path.join(tmp, "out2"), state)
        check(k2["resumed"] and k2["step"] > k1["step"], f"call 2 resumes (step {k1['step']} -> {k2['step']})")
        check(k2["train_shards"] == ["train-00000", "train-00001"], "call 2 trains on both slices")

        # the machine is lost: a fresh state, the last returned export carried as init
        shutil.copy(os.path.join(tmp, "out2", "formulate-small.safetensors"), os.path.join(tmp, "init.safetensors"))
        k3 = step(tmp, os.path.join(dev, "slice-0"), os.path.join(tmp, "out3"), os.path.join(tmp, "state2"))
        check(not k3["resumed"] and k3["init_from"].endswith("init.safetensors"),
              "after a lost machine the call starts from the returned export")
        with open(os.path.join(tmp, "out3", "train-stdout.txt")) as f:
            check("initialised from" in f.read(), "train.py reports the --init-from start")

        # carried PDF-crop shards (make-render-kit.sh --pdf-crops): --pdf-share 0.75 lists the
        # one pdf shard 3 times beside the one train shard of the same size
        pdf_slice = os.path.join(dev, "slice-pdf")
        shutil.copytree(os.path.join(dev, "slice-0"), pdf_slice)
        for part in (".idx.npy", ".img", ".tok"):
            shutil.copy(os.path.join(pdf_slice, "train-00000" + part + ".xz"),
                        os.path.join(pdf_slice, "pdf-00000" + part + ".xz"))
        k4 = step(tmp, pdf_slice, os.path.join(tmp, "out4"), os.path.join(tmp, "state3"), ("--pdf-share", "0.75"))
        check(k4["train_shards"] == ["train-00000"] + ["pdf-00000"] * 3 and
              k4["pdf_share"]["repeats"] == 3 and k4["pdf_share"]["share"] == 0.75,
              "--pdf-share 0.75 lists the PDF-crop shard 3 times (share %s)" % k4["pdf_share"])

        sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
        from safetensors_io import load_file
        tensors, md = load_file(os.path.join(tmp, "out3", "formulate-small.safetensors"))
        check(json.loads(md["formulate.config"])["d_model"] == 128 and
              all(t.dtype == torch.float16 for t in tensors.values() if t.is_floating_point()),
              "the export is an fp16 small-preset model")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
