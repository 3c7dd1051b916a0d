#!/usr/bin/python3
"""Writes the hostile-input fixtures of issue 18 that are not models
(tools/make-bad-models.py writes those):

    tests/bad/pdf/aes256.pdf   tests/fixtures/pdf/punct.pdf encrypted with
                               AES-256 (qpdf) under a 127-byte UTF-8 password;
                               Poppler 22.12 smashed its stack on passwords
                               of 128 bytes and more
    tests/bad/png/blank.png    a white image: no ink to recognise
    tests/bad/pdf/broken-fonts.pdf   punct.pdf with every embedded Type 1
                               font program overwritten: Poppler's glib binding
                               prints "some font thing failed" to stderr

    /usr/bin/python3 tools/make-hostile-inputs.py      # from the source root

Needs qpdf and PIL. AES-256 encryption draws a random file key, so aes256.pdf
is written only when it is missing (delete it to make a new one).
"""
import os
import re
import subprocess
import tempfile

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# 100 + 13 * 2 + 1 = 127 bytes: the last character ends on the limit, and
# tests/hostile/hostile-cli.sh appends to it to check the cut.
PASSWORD = "p" * 100 + "\u00e9" * 13 + "x"


def main():
    assert len(PASSWORD.encode()) == 127
    pdf_dir = os.path.join(ROOT, "tests", "bad", "pdf")
    if not os.path.exists(os.path.join(pdf_dir, "aes256.pdf")):
        subprocess.run(["qpdf", "--encrypt", PASSWORD, "formulate-owner", "256", "--",
                        os.path.join(ROOT, "tests", "fixtures", "pdf", "punct.pdf"),
                        os.path.join(pdf_dir, "aes256.pdf")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        qdf = os.path.join(tmp, "punct-qdf.pdf")
        subprocess.run(["qpdf", "--qdf", "--static-id", "--object-streams=disable",
                        os.path.join(ROOT, "tests", "fixtures", "pdf", "punct.pdf"), qdf],
                       check=True)
        data = bytearray(open(qdf, "rb").read())
    # Same lengths, so the xref stays valid: only the font programs are junk.
    for m in re.finditer(rb"stream\n%!PS-AdobeFont", bytes(data)):
        start = m.start() + len(b"stream\n")
        end = data.index(b"endstream", start) - 1
        data[start:end] = b"A" * (end - start)
    with open(os.path.join(pdf_dir, "broken-fonts.pdf"), "wb") as f:
        f.write(data)
    png_dir = os.path.join(ROOT, "tests", "bad", "png")
    os.makedirs(png_dir, exist_ok=True)
    Image.new("L", (240, 64), 255).save(os.path.join(png_dir, "blank.png"), optimize=True)


if __name__ == "__main__":
    main()
