#!/bin/sh
# Remakes the issue 14 section 1 class fixtures (tests/fixtures/pdf/cls-*.pdf and
# their truth files) from tests/fixtures/pdf/cls-*.body.tex: one small PDF per
# failure class, boxes recorded by pdfTeX (tools/pdf-truth/make-truth.py --body).
# Used by /pdf/detect/classes (tests/pdf/test-pdf.c).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gen="/usr/bin/python3 $root/tools/pdf-truth/make-truth.py"
dir=$root/tests/fixtures/pdf
for c in opname leftright numbers bold prose spacing; do
  $gen --body "$dir/cls-$c.body.tex" --out "$dir" --prefix "cls-$c"
done
$gen --body "$dir/cls-bold.body.tex" --out "$dir" --prefix cls-bold-times --fonts times
$gen --body "$dir/cls-long.body.tex" --out "$dir" --prefix cls-long --twocolumn
$gen --body "$dir/cls-joins.body.tex" --out "$dir" --prefix cls-joins --fonts sans
$gen --body "$dir/cls-joins.body.tex" --out "$dir" --prefix cls-joins-xe --engine xelatex --fonts dejavu-math
$gen --body "$dir/cls-names.body.tex" --out "$dir" --prefix cls-names --twocolumn
$gen --body "$dir/cls-names.body.tex" --out "$dir" --prefix cls-names-xe --twocolumn --engine xelatex --fonts lm-math
for f in fourier libertine; do
  $gen --body "$dir/cls-fontjoins.body.tex" --out "$dir" --prefix "cls-fontjoins-$f" --fonts $f
done
$gen --body "$dir/cls-stix.body.tex" --out "$dir" --prefix cls-stix --fonts stix2
$gen --body "$dir/cls-edges.body.tex" --out "$dir" --prefix cls-edges --fonts libertine
$gen --body "$dir/cls-edges.body.tex" --out "$dir" --prefix cls-edges-lua --engine lualatex --fonts termes-math
$gen --body "$dir/cls-edges.body.tex" --out "$dir" --prefix cls-edges-fourier --fonts fourier
$gen --body "$dir/cls-opscripts.body.tex" --out "$dir" --prefix cls-opscripts --fonts libertine
$gen --body "$dir/cls-opscripts.body.tex" --out "$dir" --prefix cls-opscripts-xe --engine xelatex --fonts stix2-math
$gen --body "$dir/cls-opscripts.body.tex" --out "$dir" --prefix cls-opscripts-lua --engine lualatex --fonts lm-math
$gen --body "$dir/cls-numbelow.body.tex" --out "$dir" --prefix cls-numbelow-xe --twocolumn --engine xelatex --fonts stix2-math
$gen --body "$dir/cls-numbelow.body.tex" --out "$dir" --prefix cls-numbelow-lua --twocolumn --engine lualatex --fonts termes-math
$gen --body "$dir/cls-dfrac.body.tex" --out "$dir" --prefix cls-dfrac --fonts stix2
$gen --body "$dir/cls-dfrac.body.tex" --out "$dir" --prefix cls-dfrac-xe --engine xelatex --fonts stix2-math
$gen --body "$dir/cls-dfrac.body.tex" --out "$dir" --prefix cls-dfrac-lua --engine lualatex --fonts pagella-math
$gen --body "$dir/cls-bigops.body.tex" --out "$dir" --prefix cls-bigops --fonts stix2
$gen --body "$dir/cls-groups.body.tex" --out "$dir" --prefix cls-groups
$gen --body "$dir/cls-groups.body.tex" --out "$dir" --prefix cls-groups-xe --engine xelatex --fonts lm-math
$gen --body "$dir/cls-groups.body.tex" --out "$dir" --prefix cls-groups-lua --engine lualatex --fonts stix2-math
$gen --body "$dir/cls-extops.body.tex" --out "$dir" --prefix cls-extops-kpfonts --fonts kpfonts
$gen --body "$dir/cls-mathalpha.body.tex" --out "$dir" --prefix cls-mathalpha-newtx --fonts newtx
$gen --body "$dir/cls-wordstart.body.tex" --out "$dir" --prefix cls-wordstart-newtx --fonts newtx
$gen --body "$dir/cls-wordstart.body.tex" --out "$dir" --prefix cls-wordstart-libertine --fonts libertine
$gen --body "$dir/cls-wordstart.body.tex" --out "$dir" --prefix cls-wordstart-cm --fonts cm
$gen --body "$dir/cls-commas.body.tex" --out "$dir" --prefix cls-commas-palatino --fonts palatino
$gen --body "$dir/cls-commas.body.tex" --out "$dir" --prefix cls-commas-newtx --fonts newtx
$gen --body "$dir/cls-commas.body.tex" --out "$dir" --prefix cls-commas-xe --engine xelatex --fonts xits-math
$gen --body "$dir/cls-overfull.body.tex" --out "$dir" --prefix cls-overfull-euler --twocolumn --class amsart --fonts euler
$gen --body "$dir/cls-quads.body.tex" --out "$dir" --prefix cls-quads-charter --fonts charter
$gen --body "$dir/cls-quads.body.tex" --out "$dir" --prefix cls-quads-xe --engine xelatex --fonts fira-math
$gen --body "$dir/cls-quads.body.tex" --out "$dir" --prefix cls-quads-lua --engine lualatex --fonts termes-math
$gen --body "$dir/cls-opsub.body.tex" --out "$dir" --prefix cls-opsub-times --fonts times
$gen --body "$dir/cls-stacks.body.tex" --out "$dir" --prefix cls-stacks-charter --twocolumn --fonts charter
$gen --body "$dir/cls-stacks.body.tex" --out "$dir" --prefix cls-stacks-xe --twocolumn --engine xelatex --fonts termes-math
$gen --body "$dir/cls-stacks.body.tex" --out "$dir" --prefix cls-stacks-lua --twocolumn --engine lualatex --fonts termes-math
$gen --body "$dir/cls-numleft.body.tex" --out "$dir" --prefix cls-numleft-lua --twocolumn --class amsart --engine lualatex --fonts dejavu-math
$gen --body "$dir/cls-numclose.body.tex" --out "$dir" --prefix cls-numclose-xe --class amsart --engine xelatex --fonts termes-math
$gen --body "$dir/cls-eqapart.body.tex" --out "$dir" --prefix cls-eqapart-stix --engine xelatex --fonts stix2-math
$gen --body "$dir/cls-eqapart.body.tex" --out "$dir" --prefix cls-eqapart-libertine --fonts libertine
$gen --body "$dir/cls-nosetminus.body.tex" --out "$dir" --prefix cls-nosetminus-dejavu --engine xelatex --fonts dejavu-math
$gen --body "$dir/cls-nosetminus.body.tex" --out "$dir" --prefix cls-nosetminus-fira --engine lualatex --fonts fira-math
$gen --body "$dir/cls-detfix.body.tex" --out "$dir" --prefix cls-detfix-cm --fonts cm
$gen --body "$dir/cls-inlinejoin.body.tex" --out "$dir" --prefix cls-inlinejoin-newtx --fonts newtx
$gen --body "$dir/cls-inlinejoin.body.tex" --out "$dir" --prefix cls-inlinejoin-xe --engine xelatex --fonts pagella-math
$gen --body "$dir/cls-inlinejoin.body.tex" --out "$dir" --prefix cls-inlinejoin-lua --engine lualatex --fonts bonum-math
$gen --body "$dir/cls-qquad.body.tex" --out "$dir" --prefix cls-qquad-libertine --fonts libertine
$gen --body "$dir/cls-qquad.body.tex" --out "$dir" --prefix cls-qquad-xe --engine xelatex --fonts stix2-math
$gen --body "$dir/cls-dispcuts.body.tex" --out "$dir" --prefix cls-dispcuts-cm --fonts cm
$gen --body "$dir/cls-dispcols.body.tex" --out "$dir" --prefix cls-dispcols-lmodern --twocolumn --fonts lmodern
$gen --body "$dir/cls-dispcols.body.tex" --out "$dir" --prefix cls-dispcols-libertine --twocolumn --fonts libertine
$gen --body "$dir/cls-midbold.body.tex" --out "$dir" --prefix cls-midbold-newtx --fonts newtx
$gen --body "$dir/cls-midbold.body.tex" --out "$dir" --prefix cls-midbold-libertine --fonts libertine
$gen --body "$dir/cls-midbold.body.tex" --out "$dir" --prefix cls-midbold-xe --engine xelatex --fonts lm-math
$gen --body "$dir/cls-sidetags.body.tex" --out "$dir" --prefix cls-sidetags-cm --fonts cm
for f in cm lmodern; do
  $gen --body "$dir/cls-limrow.body.tex" --out "$dir" --prefix "cls-limrow-$f" --fonts $f
  $gen --body "$dir/cls-limprime.body.tex" --out "$dir" --prefix "cls-limprime-$f" --fonts $f
done
$gen --body "$dir/cls-fracnum.body.tex" --out "$dir" --prefix cls-fracnum-lmodern --fonts lmodern --seed 9550
$gen --body "$dir/cls-fracnum.body.tex" --out "$dir" --prefix cls-fracnum-xe --engine xelatex --fonts termes-math --seed 9550
$gen --body "$dir/cls-fracnum.body.tex" --out "$dir" --prefix cls-fracnum-lua --engine lualatex --fonts pagella-math --seed 9550
$gen --body "$dir/cls-namebracket.body.tex" --out "$dir" --prefix cls-namebracket-xe --engine xelatex --fonts libertinus-math --seed 9551
$gen --body "$dir/cls-namebracket.body.tex" --out "$dir" --prefix cls-namebracket-lua --engine lualatex --fonts pagella-math --seed 9551
$gen --body "$dir/cls-namebracket.body.tex" --out "$dir" --prefix cls-namebracket-newtx --fonts newtx --seed 9551
$gen --body "$dir/cls-dsumfrac.body.tex" --out "$dir" --prefix cls-dsumfrac-pxfonts --fonts pxfonts --seed 9552
$gen --body "$dir/cls-dsumfrac.body.tex" --out "$dir" --prefix cls-dsumfrac-xe --engine xelatex --fonts termes-math --seed 9552
$gen --body "$dir/cls-dsumfrac.body.tex" --out "$dir" --prefix cls-dsumfrac-lua --engine lualatex --fonts termes-math --seed 9552
$gen --body "$dir/cls-opside.body.tex" --out "$dir" --prefix cls-opside-newtx --fonts newtx --seed 9553
$gen --body "$dir/cls-opside.body.tex" --out "$dir" --prefix cls-opside-libertine --fonts libertine --seed 9553
for f in cm times; do
  $gen --body "$dir/cls-remarks.body.tex" --out "$dir" --prefix "cls-remarks-$f" --fonts $f
done
for f in cm lmodern; do
  $gen --body "$dir/cls-raisedroot.body.tex" --out "$dir" --prefix "cls-raisedroot-$f" --fonts $f
done
$gen --body "$dir/cls-wordapart.body.tex" --out "$dir" --prefix cls-wordapart-cm --fonts cm
$gen --body "$dir/cls-wordapart.body.tex" --out "$dir" --prefix cls-wordapart-times --fonts times
$gen --body "$dir/cls-wordapart.body.tex" --out "$dir" --prefix cls-wordapart-stix --fonts stix2
for f in cm newtx; do
  $gen --body "$dir/cls-sharp.body.tex" --out "$dir" --prefix "cls-sharp-$f" --fonts $f
done
$gen --body "$dir/cls-barrule.body.tex" --out "$dir" --prefix cls-barrule-cm --fonts cm --seed 9750
$gen --body "$dir/cls-barrule.body.tex" --out "$dir" --prefix cls-barrule-xe --engine xelatex --fonts termes-math --seed 9750
$gen --body "$dir/cls-opgap.body.tex" --out "$dir" --prefix cls-opgap-newtx --fonts newtx --seed 9650
$gen --body "$dir/cls-opgap.body.tex" --out "$dir" --prefix cls-opgap-txfonts --fonts txfonts --seed 9650
$gen --body "$dir/cls-casesrows.body.tex" --out "$dir" --prefix cls-casesrows-xe --twocolumn --engine xelatex --fonts stix2-math --seed 9651
$gen --body "$dir/cls-casesrows.body.tex" --out "$dir" --prefix cls-casesrows-lua --twocolumn --engine lualatex --fonts stix2-math --seed 9651
for f in cm newtx; do
  $gen --body "$dir/cls-ordspace.body.tex" --out "$dir" --prefix "cls-ordspace-$f" --fonts $f --seed 9900
done
for f in newtx libertine; do
  $gen --body "$dir/cls-intdiff.body.tex" --out "$dir" --prefix "cls-intdiff-$f" --fonts $f --seed 10033
done
$gen --body "$dir/cls-intdiff.body.tex" --out "$dir" --prefix cls-intdiff-xe --engine xelatex --fonts termes-math --seed 10033
$gen --body "$dir/crop-widecol.body.tex" --out "$dir" --prefix crop-widecol --twocolumn --fonts cm
rm -f "$dir/crop-widecol.truth.json"  # a crop test (tests/pdf/test-recognize.c), no detection truth
$gen --body "$dir/cls-fracapart.body.tex" --out "$dir" --prefix cls-fracapart-cm --fonts cm --seed 9800
$gen --body "$dir/cls-fracapart.body.tex" --out "$dir" --prefix cls-fracapart-times --fonts times --seed 9800
$gen --body "$dir/cls-fracapart.body.tex" --out "$dir" --prefix cls-fracapart-xe --engine xelatex --fonts lm-math --seed 9800
$gen --body "$dir/cls-italicsup.body.tex" --out "$dir" --prefix cls-italicsup-cm --fonts cm --seed 9801
$gen --body "$dir/cls-italicsup.body.tex" --out "$dir" --prefix cls-italicsup-xe --engine xelatex --fonts lm-math --seed 9801
$gen --body "$dir/cls-inlinestyle.body.tex" --out "$dir" --prefix cls-inlinestyle-cm --fonts cm --seed 9950
$gen --body "$dir/cls-inlinestyle.body.tex" --out "$dir" --prefix cls-inlinestyle-xe --engine xelatex --fonts lm-math --seed 9950
$gen --body "$dir/cls-dispstyle.body.tex" --out "$dir" --prefix cls-dispstyle-newtx --fonts newtx --seed 10150
$gen --body "$dir/cls-dispstyle.body.tex" --out "$dir" --prefix cls-dispstyle-xe --engine xelatex --fonts stix2-math --seed 10150
$gen --body "$dir/cls-scriptfrac.body.tex" --out "$dir" --prefix cls-scriptfrac-cm --fonts cm --seed 10240
$gen --body "$dir/cls-scriptfrac.body.tex" --out "$dir" --prefix cls-scriptfrac-xe --engine xelatex --fonts lm-math --seed 10240

for f in cm palatino; do
  $gen --body "$dir/cls-textdisp.body.tex" --out "$dir" --prefix "cls-textdisp-$f" --fonts $f --seed 10010
done
$gen --body "$dir/cls-textdisp.body.tex" --out "$dir" --prefix cls-textdisp-xe --engine xelatex --fonts termes-math --seed 10010
for f in lmodern newtx; do
  $gen --body "$dir/cls-substack.body.tex" --out "$dir" --prefix "cls-substack-$f" --fonts $f --seed 10011
done
$gen --body "$dir/cls-substack.body.tex" --out "$dir" --prefix cls-substack-lua --engine lualatex --fonts pagella-math --seed 10011
$gen --body "$dir/cls-longcond.body.tex" --out "$dir" --prefix cls-longcond-kpfonts --fonts kpfonts --seed 10012
$gen --body "$dir/cls-longcond.body.tex" --out "$dir" --prefix cls-longcond-xe --engine xelatex --fonts libertinus-math --seed 10012
for f in sans cm; do
  $gen --body "$dir/cls-dispcross.body.tex" --out "$dir" --prefix "cls-dispcross-$f" --twocolumn --fonts $f --seed 10013
done
$gen --body "$dir/cls-remarkrows.body.tex" --out "$dir" --prefix cls-remarkrows-cm --fonts cm --seed 10014
$gen --body "$dir/cls-remarkrows.body.tex" --out "$dir" --prefix cls-remarkrows-xe --engine xelatex --fonts lm-math --seed 10014

for f in cm lmodern; do
  $gen --body "$dir/cls-units.body.tex" --out "$dir" --prefix "cls-units-$f" --fonts $f --seed 10100
done
$gen --body "$dir/cls-units.body.tex" --out "$dir" --prefix cls-units-xe --engine xelatex --fonts lm-math --seed 10100

# (12 pt: at 10 pt the footnote's fraction was found before detectfix7's fixture too)
$gen --body "$dir/cls-footfrac.body.tex" --out "$dir" --prefix cls-footfrac-xe --engine xelatex --fonts dejavu-math --size 12pt --seed 10130
$gen --body "$dir/cls-footfrac.body.tex" --out "$dir" --prefix cls-footfrac-lua --engine lualatex --fonts pagella-math --size 12pt --seed 10130
$gen --body "$dir/cls-stackparts.body.tex" --out "$dir" --prefix cls-stackparts-stix2 --fonts stix2 --seed 10200
$gen --body "$dir/cls-stackparts.body.tex" --out "$dir" --prefix cls-stackparts-newtx --fonts newtx --seed 10200
$gen --body "$dir/cls-stackparts.body.tex" --out "$dir" --prefix cls-stackparts-xe --engine xelatex --fonts termes-math --seed 10200
$gen --body "$dir/cls-phrasedisp.body.tex" --out "$dir" --prefix cls-phrasedisp-cm --twocolumn --fonts cm --seed 10201
$gen --body "$dir/cls-phrasedisp.body.tex" --out "$dir" --prefix cls-phrasedisp-xe --twocolumn --engine xelatex --fonts pagella-math --seed 10201
$gen --body "$dir/cls-phrasedisp.body.tex" --out "$dir" --prefix cls-phrasedisp-lua --twocolumn --engine lualatex --fonts stix2-math --seed 10201
$gen --body "$dir/cls-bigdelimwords.body.tex" --out "$dir" --prefix cls-bigdelimwords-cm --fonts cm --seed 10202
$gen --body "$dir/cls-bigdelimwords.body.tex" --out "$dir" --prefix cls-bigdelimwords-palatino --fonts palatino --seed 10202
# detectfix9 (review of detect14t): displays that open with a capitalised word, a framed paragraph
$gen --body "$dir/cls-capdisp.body.tex" --out "$dir" --prefix cls-capdisp-cm --fonts cm --seed 10255
$gen --body "$dir/cls-capdisp.body.tex" --out "$dir" --prefix cls-capdisp-xe --engine xelatex --fonts termes-math --seed 10255
$gen --body "$dir/cls-boxpar.body.tex" --out "$dir" --prefix cls-boxpar-cm --fonts cm --seed 10256
$gen --body "$dir/cls-boxpar.body.tex" --out "$dir" --prefix cls-boxpar-lua --engine lualatex --fonts lm-math --seed 10256
$gen --body "$dir/cls-centreprose.body.tex" --out "$dir" --prefix cls-centreprose-cm --fonts cm --seed 10257
$gen --body "$dir/cls-centreprose.body.tex" --out "$dir" --prefix cls-centreprose-xe --engine xelatex --fonts termes-math --seed 10257


# e2e12r (issue 12): CM/LM formulas pdf-e2e missed or cut
for f in cm lmodern; do
  $gen --body "$dir/cls-scriptnum.body.tex" --out "$dir" --prefix "cls-scriptnum-$f" --fonts $f --seed 10160
  $gen --body "$dir/cls-exactdiff.body.tex" --out "$dir" --prefix "cls-exactdiff-$f" --fonts $f --seed 10161
  $gen --body "$dir/cls-condrows.body.tex" --out "$dir" --prefix "cls-condrows-$f" --fonts $f --twocolumn --size 12pt --seed 10162
  $gen --body "$dir/cls-wordremark.body.tex" --out "$dir" --prefix "cls-wordremark-$f" --fonts $f --seed 10163
  $gen --body "$dir/cls-fracgaps.body.tex" --out "$dir" --prefix "cls-fracgaps-$f" --fonts $f --seed 10164
  $gen --body "$dir/cls-alignfrac.body.tex" --out "$dir" --prefix "cls-alignfrac-$f" --fonts $f --size 11pt --seed 10165
  $gen --body "$dir/cls-expunit.body.tex" --out "$dir" --prefix "cls-expunit-$f" --fonts $f --class amsart --size 12pt --seed 10166
done

# detectfix10 (review of e2e12r): columns of words beside a block that are
# no cases' conditions (prose minipage, notation tables)
for f in cm lmodern; do
  $gen --body "$dir/cls-condtable.body.tex" --out "$dir" --prefix "cls-condtable-$f" --fonts $f --seed 10270
done

# detectfix11 (review of detectfix9's rules): a display named in lower-case
# words whose fraction Poppler lists as lines of its own; a caption's label;
# the wide row of a left-aligned aligned display set in by slivers
$gen --body "$dir/cls-namedfrac.body.tex" --out "$dir" --prefix cls-namedfrac-times --fonts times --seed 10360
$gen --body "$dir/cls-namedfrac.body.tex" --out "$dir" --prefix cls-namedfrac-cm --fonts cm --seed 10360
$gen --body "$dir/cls-caption.body.tex" --out "$dir" --prefix cls-caption-cm --fonts cm --seed 10361
$gen --body "$dir/cls-caption.body.tex" --out "$dir" --prefix cls-caption-xe --engine xelatex --fonts termes-math --seed 10361
$gen --body "$dir/cls-alignedge.body.tex" --out "$dir" --prefix cls-alignedge-cm --twocolumn --fonts cm --seed 10362
# (its scanned twins: tests/fixtures/pdf/scan/README.md, scanand)
$gen --body "$dir/cls-scanand.body.tex" --out "$dir" --prefix cls-scanand-cm --fonts cm --seed 10363
# scanfix8: fleqn displays flush with the margin, a function word a word space
# from the math (its scanned twin: tests/fixtures/pdf/scan/README.md, fleqn)
$gen --body "$dir/cls-scanfleqn.body.tex" --out "$dir" --prefix cls-scanfleqn-cm --fonts cm --seed 10520
# scanmerge: inline formulas a word space apart, operand against operand
# (its scanned twin: tests/fixtures/pdf/scan/README.md, pairs)
$gen --body "$dir/cls-scanpairs.body.tex" --out "$dir" --prefix cls-scanpairs-cm --fonts cm --seed 10570
# scanfix9: single inline formulas with word-sized inner spaces (narrow
# relations, a text-style integral, \ln; its scanned twin:
# tests/fixtures/pdf/scan/README.md, narrow)
$gen --body "$dir/cls-scannarrow.body.tex" --out "$dir" --prefix cls-scannarrow-newtx --fonts newtx --seed 10572
# scandisp: inline formulas alone on their paragraph's last line (its scanned
# twin: tests/fixtures/pdf/scan/README.md, lastline)
$gen --body "$dir/cls-scanlastline.body.tex" --out "$dir" --prefix cls-scanlastline-cm --fonts cm --seed 10582
# scanfix10: inline formulas a word space apart beside norms and absolute
# values read with uneven bars (its scanned twin: tests/fixtures/pdf/scan/README.md, bars)
$gen --body "$dir/cls-scanbars.body.tex" --out "$dir" --prefix cls-scanbars-times --fonts times --seed 10680
# scanpair2: inline formulas a word space apart whose facing operand sits
# between an operator's thick space and the word space, or reads as a lone
# misread glyph (its scanned twin: tests/fixtures/pdf/scan/README.md, pair2)
$gen --body "$dir/cls-scanpair2.body.tex" --out "$dir" --prefix cls-scanpair2-cm --fonts cm --seed 11100
# scancut: single inline formulas that scans cut in pieces - text-style sums
# whose lower limit ends far from the sign, lists x_1, \dots, x_n (its scanned
# twins: tests/fixtures/pdf/scan/README.md, cut and cutlist)
$gen --body "$dir/cls-scancut.body.tex" --out "$dir" --prefix cls-scancut-palatino --fonts palatino --seed 11500
# scanfix10: cls-scanlastline's paragraphs double-spaced (its scanned twin:
# tests/fixtures/pdf/scan/README.md, double)
$gen --body "$dir/cls-scandouble.body.tex" --out "$dir" --prefix cls-scandouble-cm --fonts cm --seed 10681
# scanlight: flat fleqn displays with tight display skips, 1.2-1.3 leadings
# under the prose (its scanned twin: tests/fixtures/pdf/scan/README.md, flushtight)
$gen --body "$dir/cls-scanflushtight.body.tex" --out "$dir" --prefix cls-scanflushtight-cm --fonts cm --seed 10670

# detect14u: a list parted by comma and control space, a lost \amalg after
# a subscript, a script of text listed apart, symbolsC's relations
$gen --body "$dir/cls-commalist.body.tex" --out "$dir" --prefix cls-commalist-kpfonts --fonts kpfonts --seed 10320
$gen --body "$dir/cls-commalist.body.tex" --out "$dir" --prefix cls-commalist-xe --engine xelatex --fonts libertinus-math --seed 10320
$gen --body "$dir/cls-lostamalg.body.tex" --out "$dir" --prefix cls-lostamalg-xe --engine xelatex --fonts fira-math --seed 10321
$gen --body "$dir/cls-lostamalg.body.tex" --out "$dir" --prefix cls-lostamalg-lua --engine lualatex --fonts fira-math --seed 10321
$gen --body "$dir/cls-scriptapart.body.tex" --out "$dir" --prefix cls-scriptapart-euler --fonts euler --seed 10322
$gen --body "$dir/cls-scriptapart.body.tex" --out "$dir" --prefix cls-scriptapart-xe --engine xelatex --fonts bonum-math --seed 10322
$gen --body "$dir/cls-sycrel.body.tex" --out "$dir" --prefix cls-sycrel-kpfonts --fonts kpfonts --seed 10323
$gen --body "$dir/cls-sycrel.body.tex" --out "$dir" --prefix cls-sycrel-txfonts --fonts txfonts --seed 10323
$gen --body "$dir/cls-italicrun.body.tex" --out "$dir" --prefix cls-italicrun-palatino --fonts palatino --seed 10324
$gen --body "$dir/cls-italicrun.body.tex" --out "$dir" --prefix cls-italicrun-times --fonts times --seed 10324
$gen --body "$dir/cls-wordbracket.body.tex" --out "$dir" --prefix cls-wordbracket-xe --engine xelatex --fonts pagella-math --seed 10325
$gen --body "$dir/cls-wordbracket.body.tex" --out "$dir" --prefix cls-wordbracket-lua --engine lualatex --fonts pagella-math --seed 10325

# e2e12s (issue 12): displays named in words with a bracketed remark, a
# relation alone between words of prose
for f in cm lmodern; do
  $gen --body "$dir/cls-namedremark.body.tex" --out "$dir" --prefix "cls-namedremark-$f" --fonts $f --seed 10280
done
$gen --body "$dir/cls-namedremark.body.tex" --out "$dir" --prefix cls-namedremark-xe --engine xelatex --fonts lm-math --seed 10280
for f in cm lmodern times; do
  $gen --body "$dir/cls-lonerel.body.tex" --out "$dir" --prefix "cls-lonerel-$f" --fonts $f --seed 10281
done

# detect14v (issue 14): displays whose fractions hold words, \text numerators
# and units over units
for f in palatino txfonts euler; do
  $gen --body "$dir/cls-wordfrac.body.tex" --out "$dir" --prefix "cls-wordfrac-$f" --fonts $f --seed 10460
done
# words after a \quad beside an aligned display's middle row
$gen --body "$dir/cls-rowwords.body.tex" --out "$dir" --prefix cls-rowwords-euler --fonts euler --seed 10464
$gen --body "$dir/cls-rowwords.body.tex" --out "$dir" --prefix cls-rowwords-palatino --fonts palatino --seed 10464
# detectfix17 (review of detect14v): a centred prose line with an inline
# display-style sum over a fraction, its words below the sum chunk's middle
for f in cm lmodern; do
  $gen --body "$dir/cls-sumfrac.body.tex" --out "$dir" --prefix "cls-sumfrac-$f" --fonts $f --seed 10470
done
# detectfix16 (review of detectfix11 and detect14u): two-line framed
# paragraphs, function applications on squeezed lines, emphasised words
# between math signs
$gen --body "$dir/cls-boxtwo.body.tex" --out "$dir" --prefix cls-boxtwo-cm --fonts cm --seed 10440
$gen --body "$dir/cls-boxtwo.body.tex" --out "$dir" --prefix cls-boxtwo-times --fonts times --seed 10440
$gen --body "$dir/cls-squeeze.body.tex" --out "$dir" --prefix cls-squeeze-cm --fonts cm --seed 10441
$gen --body "$dir/cls-squeeze.body.tex" --out "$dir" --prefix cls-squeeze-lmodern --fonts lmodern --seed 10441
$gen --body "$dir/cls-emphsigns.body.tex" --out "$dir" --prefix cls-emphsigns-times --fonts times --seed 10442
$gen --body "$dir/cls-emphsigns.body.tex" --out "$dir" --prefix cls-emphsigns-palatino --fonts palatino --seed 10442
$gen --body "$dir/cls-emphsigns.body.tex" --out "$dir" --prefix cls-emphsigns-cm --fonts cm --seed 10442
# e2e12t (issue 12): an operator name before a number, all in the text font
# (\sinh 0 = 0 in CMR), with typed prose "log 2" a word space apart, and
# limits under a name (\lim\limits_{N\to\infty}); a formula ending in a
# script, a word space before the next ($Y_\infty$ 2024, $a^n$ $\vec{v}$);
# \mapsto, whose CMSY bar Poppler reads as a '7' (z_n \mapsto f(..))
for f in cm lmodern; do
  $gen --body "$dir/cls-opnum.body.tex" --out "$dir" --prefix "cls-opnum-$f" --fonts $f --seed 10480
  $gen --body "$dir/cls-scriptspace.body.tex" --out "$dir" --prefix "cls-scriptspace-$f" --fonts $f --seed 10481
  $gen --body "$dir/cls-mapsto.body.tex" --out "$dir" --prefix "cls-mapsto-$f" --fonts $f --seed 10482
done
# detectprec (issue 14): text-style fractions of digits in a text line
# (\frac{1}{2}: pdfLaTeX's text-font digits and a rule, no seed), and a
# numerator and a denominator that Poppler lists as one word
for f in cm times; do
  $gen --body "$dir/cls-textfrac.body.tex" --out "$dir" --prefix "cls-textfrac-$f" --fonts $f --seed 10600
done
# detectprec: cases displays with words in their conditions on a page too
# short for its text margins to be known
for f in cm times; do
  $gen --body "$dir/cls-casescol.body.tex" --out "$dir" --prefix "cls-casescol-$f" --fonts $f --seed 10601
done
# lead, session v: numbered displays as wide as a column whose formulas a
# word joins a \quad apart each side (\quad\text{in}\quad)
$gen --body "$dir/cls-quadword.body.tex" --out "$dir" --prefix cls-quadword-lmodern --twocolumn --fonts lmodern --seed 10690
$gen --body "$dir/cls-quadword.body.tex" --out "$dir" --prefix cls-quadword-xe --twocolumn --engine xelatex --fonts termes-math --seed 10690
$gen --body "$dir/cls-quadword.body.tex" --out "$dir" --prefix cls-quadword-lua --twocolumn --engine lualatex --fonts termes-math --seed 10690
# detectprec2 (review of detectprec): a cases and a \left\{ ... \right. in a
# text line of a short page, their first row above the line taken for a
# display
for f in cm newtx; do
  $gen --body "$dir/cls-inlcases.body.tex" --out "$dir" --prefix "cls-inlcases-$f" --fonts $f --seed 10646
done
$gen --body "$dir/cls-inlcases.body.tex" --out "$dir" --prefix cls-inlcases-xe --engine xelatex --fonts stix2-math --seed 10646
# detectfix20 (review findings of detectfix16 and detect14v; detectfix18's
# bodies): aligned rows \jot 0-1 pt apart sharing one edge, and words beside
# an aligned display's row in fonts whose row holds no math glyph
$gen --body "$dir/cls-jotrows.body.tex" --out "$dir" --prefix cls-jotrows-cm --twocolumn --fonts cm --seed 10630
$gen --body "$dir/cls-jotrows.body.tex" --out "$dir" --prefix cls-jotrows-lua --twocolumn --engine lualatex --fonts lm-math --seed 10630
for f in cm times; do
  $gen --body "$dir/cls-rowwords.body.tex" --out "$dir" --prefix "cls-rowwords-$f" --fonts $f --seed 10631
done
$gen --body "$dir/cls-rowwords.body.tex" --out "$dir" --prefix cls-rowwords-xe --engine xelatex --fonts xits-math --seed 10631
# rvfix20 (review of detectfix20): inline formulas starting a line of an
# \fbox{\parbox}, the box's side taken for a lost delimiter
$gen --body "$dir/cls-framerule.body.tex" --out "$dir" --prefix cls-framerule-cm --fonts cm --seed 11050
$gen --body "$dir/cls-framerule.body.tex" --out "$dir" --prefix cls-framerule-palatino --fonts palatino --seed 11050
$gen --body "$dir/cls-framerule.body.tex" --out "$dir" --prefix cls-framerule-xe --engine xelatex --fonts lm-math --seed 11050
# rvprec2 (review of detectprec2): cases displays whose line opens with
# words before the brace, on a short page (margins unknown)
for f in cm times; do
  $gen --body "$dir/cls-caseswords.body.tex" --out "$dir" --prefix "cls-caseswords-$f" --fonts $f --seed 11000
done
$gen --body "$dir/cls-caseswords.body.tex" --out "$dir" --prefix cls-caseswords-xe --engine xelatex --fonts stix2-math --seed 11000
$gen --body "$dir/cls-caseswords.body.tex" --out "$dir" --prefix cls-caseswords-lua --engine lualatex --fonts libertinus-math --seed 11000
# detectprec3 (issue 14): text-style fractions in a text line in OpenType
# fonts whose denominators are chunks of their own, taken into the next
# line's raised \dfrac numerator's line and made displays
$gen --body "$dir/cls-textfrac.body.tex" --out "$dir" --prefix cls-textfrac-lua --engine lualatex --fonts stix2-math --seed 11350
$gen --body "$dir/cls-textfrac.body.tex" --out "$dir" --prefix cls-textfrac-xe --engine xelatex --fonts libertinus-math --seed 11350
# detectprec3: an inline cases starting a line, the prose right of its rows
$gen --body "$dir/cls-casesstart.body.tex" --out "$dir" --prefix cls-casesstart-lua --engine lualatex --fonts stix2-math --seed 11351
$gen --body "$dir/cls-casesstart.body.tex" --out "$dir" --prefix cls-casesstart-xe --engine xelatex --fonts libertinus-math --seed 11351
# detectprec3: a numbered display of an upright acronym and a fraction whose
# stacked parts were not counted among its line's glyphs (two columns, 12 pt)
$gen --body "$dir/cls-wordfrac2.body.tex" --out "$dir" --prefix cls-wordfrac2-xe --engine xelatex --fonts stix2-math --twocolumn --size 12pt --seed 11352
$gen --body "$dir/cls-wordfrac2.body.tex" --out "$dir" --prefix cls-wordfrac2-lua --engine lualatex --fonts libertinus-math --twocolumn --size 12pt --seed 11352
# detecttext (issue 14): displays whose words are most of the line - a set's
# condition in words, formulas joined by a clause a \quad apart
$gen --body "$dir/cls-setwords.body.tex" --out "$dir" --prefix cls-setwords-cm --fonts cm --seed 11300
$gen --body "$dir/cls-setwords.body.tex" --out "$dir" --prefix cls-setwords-xe --engine xelatex --fonts stix2-math --seed 11300
$gen --body "$dir/cls-setwords.body.tex" --out "$dir" --prefix cls-setwords-lua --engine lualatex --fonts libertinus-math --seed 11300
# detecttext (issue 14): a math letter before a \left delimiter, a thin
# space and the delimiter's sidebearing apart (over 0.4 em)
for f in cm libertine; do
  $gen --body "$dir/cls-letterdelim.body.tex" --out "$dir" --prefix "cls-letterdelim-$f" --fonts $f --seed 11301
done
# detecttext (issue 14): displays of framed paragraphs joined by math
$gen --body "$dir/cls-framedisp.body.tex" --out "$dir" --prefix cls-framedisp-cm --fonts cm --seed 11302
$gen --body "$dir/cls-framedisp.body.tex" --out "$dir" --prefix cls-framedisp-xe --engine xelatex --fonts lm-math --seed 11302
$gen --body "$dir/cls-framedisp.body.tex" --out "$dir" --prefix cls-framedisp-lua --engine lualatex --fonts termes-math --seed 11302
# detectop (issue 14): an operator name, \, and a letter, as wide apart as
# the line's word space (1/3 em in CM and LM; Libertine's sidebearings)
$gen --body "$dir/cls-opthin.body.tex" --out "$dir" --prefix cls-opthin-cm --fonts cm --seed 11450
$gen --body "$dir/cls-opthin.body.tex" --out "$dir" --prefix cls-opthin-xe --engine xelatex --fonts lm-math --seed 11450
$gen --body "$dir/cls-opthin.body.tex" --out "$dir" --prefix cls-opthin-libertine --fonts libertine --seed 11450
# scanprose: footnotes starting "A" under the footnote rule (its scanned twin:
# tests/fixtures/pdf/scan/README.md, footnote-lost-mark)
$gen --body "$dir/cls-scanfootnote.body.tex" --out "$dir" --prefix cls-scanfootnote-cm --fonts cm --seed 11561
# detectinline (issue 14): two inline formulas parted by the sentence's comma
# and a word space ("$x=1$, $y$"), and by a word space after a closing bar
# before a big operator ("$\bigl| f \bigr|$ $\int_0^1 g$", LM Math's U+2223)
for f in libertine newtx; do
  $gen --body "$dir/cls-sentcomma.body.tex" --out "$dir" --prefix "cls-sentcomma-$f" --fonts $f --seed 11640
done
$gen --body "$dir/cls-sentcomma.body.tex" --out "$dir" --prefix cls-sentcomma-xe --engine xelatex --fonts stix2-math --seed 11640
$gen --body "$dir/cls-barop.body.tex" --out "$dir" --prefix cls-barop-xe --engine xelatex --fonts lm-math --seed 11641
$gen --body "$dir/cls-barop.body.tex" --out "$dir" --prefix cls-barop-lua --engine lualatex --fonts lm-math --seed 11641
# detectb2b (issue 14): displays set back to back, parted by their own
# numbers or their spacing unless their rows share a relation's x
$gen --body "$dir/cls-b2b.body.tex" --out "$dir" --prefix cls-b2b-cm --fonts cm --seed 11660
$gen --body "$dir/cls-b2b.body.tex" --out "$dir" --prefix cls-b2b-xe --engine xelatex --fonts lm-math --seed 11660
# detectreal (issue 14): a formula ending in a closing bar or bracket a word
# space before one opening with a radical
$gen --body "$dir/cls-barroot.body.tex" --out "$dir" --prefix cls-barroot-newtx --fonts newtx --seed 11670
$gen --body "$dir/cls-barroot.body.tex" --out "$dir" --prefix cls-barroot-libertine --fonts libertine --seed 11670
# detectreal (issue 14): list labels and footnote marks that open a line of
# running text, \fnsymbol's star after a word
$gen --body "$dir/cls-linemarks.body.tex" --out "$dir" --prefix cls-linemarks-cm --fonts cm --seed 11671
$gen --body "$dir/cls-linemarks.body.tex" --out "$dir" --prefix cls-linemarks-xe --engine xelatex --fonts lm-math --seed 11671
# detectreal (issue 14): meta-variables with digits, underscores, two words;
# docstrip's guards in listings
$gen --body "$dir/cls-metavars.body.tex" --out "$dir" --prefix cls-metavars-cm --fonts cm --seed 11672
$gen --body "$dir/cls-metavars.body.tex" --out "$dir" --prefix cls-metavars-xe --engine xelatex --fonts lm-math --seed 11672
# detectreal (issue 14): section and paragraph signs from CMSY before a number
$gen --body "$dir/cls-sectsign.body.tex" --out "$dir" --prefix cls-sectsign-cm --fonts cm --seed 11673
