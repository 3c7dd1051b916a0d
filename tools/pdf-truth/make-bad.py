#!/usr/bin/python3
"""Write the bad-input PDF corpus tests/bad/pdf/ (and check it in).

  /usr/bin/python3 tools/pdf-truth/make-bad.py tests/bad/pdf tests/fixtures/pdf/truth-1-00.pdf

Each file exercises one failure the PDF library must report in one line
without crashing; tests/pdf/test-pdf.c and tests/pdf/bad-input.sh list the
expected errors and exit codes. encrypted.pdf needs qpdf.
"""
import os
import subprocess
import sys


def pdf(objects, extra_trailer=""):
    """A PDF with correct xref offsets from a list of object bodies (1-based)."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body.encode("latin-1") + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += ("trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, extra_trailer, xref)).encode("latin-1")
    return bytes(out)


def stream(data):
    return "<< /Length %d >>\nstream\n%s\nendstream" % (len(data), data)


TEXT = "BT /F1 12 Tf 72 700 Td (Let x be a number) Tj ET"
FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def one_page(media, content, resources="<< /Font << /F1 4 0 R >> >>"):
    return pdf(["<< /Type /Catalog /Pages 2 0 R >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox %s /Resources %s /Contents 5 0 R >>" % (media, resources),
                FONT, stream(content)])


def main():
    out_dir, good = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)

    write("not-a-pdf.pdf", b"This is a plain text file that merely ends in .pdf\n")
    write("empty.pdf", b"")
    data = open(good, "rb").read()
    write("truncated.pdf", data[: len(data) * 2 // 5])
    write("zero-pages.pdf", pdf(["<< /Type /Catalog /Pages 2 0 R >>",
                                 "<< /Type /Pages /Kids [] /Count 0 >>"]))
    # 200 x 200 inches: legal, must work within the render pixel cap.
    write("huge-page.pdf", one_page("[0 0 14400 14400]", TEXT))
    # A page no renderer can use.
    write("absurd-size.pdf", one_page("[0 0 1e12 1e12]", TEXT))
    # Text drawn with a font that does not exist and an XObject that is missing.
    write("unrenderable.pdf", one_page("[0 0 612 792]", "q /Missing Do Q BT /F9 12 Tf 72 700 Td (x) Tj ET 1 0 0 RG 0 0 m",
                                       resources="<< >>"))
    # Only vector graphics, as a scan would be only an image: no text layer.
    write("no-text.pdf", one_page("[0 0 612 792]", "0 0 0 rg 100 100 200 200 re f"))
    subprocess.run(["qpdf", "--encrypt", "secret", "owner", "256", "--", good,
                    os.path.join(out_dir, "encrypted.pdf")], check=True)
    print("wrote", sorted(os.listdir(out_dir)))


if __name__ == "__main__":
    main()
