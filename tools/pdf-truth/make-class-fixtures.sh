#!/bin/sh
# Remakes the issue 14 section 1 class fixtures (tests/fixtures/pdf/cls-*.pdf and
# their truth files) from tests/fixtures/pdf/cls-*.body.tex: one small PDF per
# failure class, boxes recorded by pdfTeX (tools/pdf-truth/make-truth.py --body).
# Used by /pdf/detect/classes (tests/pdf/test-pdf.c).
#
# Usage: tools/pdf-truth/make-class-fixtures.sh [GLOB...]
# With no GLOB every fixture in the table below is made again; with some, only
# those whose prefix (the fixture's file name without .pdf) matches one of the
# GLOBs as a shell pattern: 'cls-scan*' remakes the text-layer twins of the
# scanned fixtures, cls-b2b-xe that one fixture.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gen="/usr/bin/python3 $root/tools/pdf-truth/make-truth.py"
dir=$root/tests/fixtures/pdf

made=0
while read -r body prefix seed options; do
  case $body in
    '' | '#'*) continue ;;
  esac
  if [ $# -gt 0 ]; then
    matched=no
    for glob in "$@"; do
      # $glob unquoted: matched as a pattern, not as a string
      case $prefix in
        $glob) matched=yes ;;
      esac
    done
    [ $matched = yes ] || continue
  fi
  seed_option=
  [ "$seed" = - ] || seed_option="--seed $seed"
  # stdin from /dev/null: a TeX run that stops to ask must not read the table
  $gen --body "$dir/$body.body.tex" --out "$dir" --prefix "$prefix" $options $seed_option </dev/null
  case $prefix in
    # crop tests (tests/pdf/test-recognize.c), no detection truth
    crop-*) rm -f "$dir/$prefix.truth.json" ;;
  esac
  made=$((made + 1))
done <<'FIXTURES'
# One row a fixture: the body (tests/fixtures/pdf/BODY.body.tex), the prefix
# its PDF and truth are named by, make-truth.py's --seed (- for its default)
# and make-truth.py's other options. Rows are made in this order.
#
# body            prefix                       seed   options
cls-opname        cls-opname                   -
cls-leftright     cls-leftright                -
cls-numbers       cls-numbers                  -
cls-bold          cls-bold                     -
cls-prose         cls-prose                    -
cls-spacing       cls-spacing                  -
cls-bold          cls-bold-times               -      --fonts times
cls-long          cls-long                     -      --twocolumn
cls-joins         cls-joins                    -      --fonts sans
cls-joins         cls-joins-xe                 -      --engine xelatex --fonts dejavu-math
cls-names         cls-names                    -      --twocolumn
cls-names         cls-names-xe                 -      --twocolumn --engine xelatex --fonts lm-math
cls-fontjoins     cls-fontjoins-fourier        -      --fonts fourier
cls-fontjoins     cls-fontjoins-libertine      -      --fonts libertine
cls-stix          cls-stix                     -      --fonts stix2
cls-edges         cls-edges                    -      --fonts libertine
cls-edges         cls-edges-lua                -      --engine lualatex --fonts termes-math
cls-edges         cls-edges-fourier            -      --fonts fourier
cls-opscripts     cls-opscripts                -      --fonts libertine
cls-opscripts     cls-opscripts-xe             -      --engine xelatex --fonts stix2-math
cls-opscripts     cls-opscripts-lua            -      --engine lualatex --fonts lm-math
cls-numbelow      cls-numbelow-xe              -      --twocolumn --engine xelatex --fonts stix2-math
cls-numbelow      cls-numbelow-lua             -      --twocolumn --engine lualatex --fonts termes-math
cls-dfrac         cls-dfrac                    -      --fonts stix2
cls-dfrac         cls-dfrac-xe                 -      --engine xelatex --fonts stix2-math
cls-dfrac         cls-dfrac-lua                -      --engine lualatex --fonts pagella-math
cls-bigops        cls-bigops                   -      --fonts stix2
cls-groups        cls-groups                   -
cls-groups        cls-groups-xe                -      --engine xelatex --fonts lm-math
cls-groups        cls-groups-lua               -      --engine lualatex --fonts stix2-math
cls-extops        cls-extops-kpfonts           -      --fonts kpfonts
cls-mathalpha     cls-mathalpha-newtx          -      --fonts newtx
cls-wordstart     cls-wordstart-newtx          -      --fonts newtx
cls-wordstart     cls-wordstart-libertine      -      --fonts libertine
cls-wordstart     cls-wordstart-cm             -      --fonts cm
cls-commas        cls-commas-palatino          -      --fonts palatino
cls-commas        cls-commas-newtx             -      --fonts newtx
cls-commas        cls-commas-xe                -      --engine xelatex --fonts xits-math
cls-overfull      cls-overfull-euler           -      --twocolumn --class amsart --fonts euler
cls-quads         cls-quads-charter            -      --fonts charter
cls-quads         cls-quads-xe                 -      --engine xelatex --fonts fira-math
cls-quads         cls-quads-lua                -      --engine lualatex --fonts termes-math
cls-opsub         cls-opsub-times              -      --fonts times
cls-stacks        cls-stacks-charter           -      --twocolumn --fonts charter
cls-stacks        cls-stacks-xe                -      --twocolumn --engine xelatex --fonts termes-math
cls-stacks        cls-stacks-lua               -      --twocolumn --engine lualatex --fonts termes-math
cls-numleft       cls-numleft-lua              -      --twocolumn --class amsart --engine lualatex --fonts dejavu-math
cls-numclose      cls-numclose-xe              -      --class amsart --engine xelatex --fonts termes-math
cls-eqapart       cls-eqapart-stix             -      --engine xelatex --fonts stix2-math
cls-eqapart       cls-eqapart-libertine        -      --fonts libertine
cls-nosetminus    cls-nosetminus-dejavu        -      --engine xelatex --fonts dejavu-math
cls-nosetminus    cls-nosetminus-fira          -      --engine lualatex --fonts fira-math
cls-detfix        cls-detfix-cm                -      --fonts cm
cls-inlinejoin    cls-inlinejoin-newtx         -      --fonts newtx
cls-inlinejoin    cls-inlinejoin-xe            -      --engine xelatex --fonts pagella-math
cls-inlinejoin    cls-inlinejoin-lua           -      --engine lualatex --fonts bonum-math
cls-qquad         cls-qquad-libertine          -      --fonts libertine
cls-qquad         cls-qquad-xe                 -      --engine xelatex --fonts stix2-math
cls-dispcuts      cls-dispcuts-cm              -      --fonts cm
cls-dispcols      cls-dispcols-lmodern         -      --twocolumn --fonts lmodern
cls-dispcols      cls-dispcols-libertine       -      --twocolumn --fonts libertine
cls-midbold       cls-midbold-newtx            -      --fonts newtx
cls-midbold       cls-midbold-libertine        -      --fonts libertine
cls-midbold       cls-midbold-xe               -      --engine xelatex --fonts lm-math
cls-sidetags      cls-sidetags-cm              -      --fonts cm
cls-limrow        cls-limrow-cm                -      --fonts cm
cls-limprime      cls-limprime-cm              -      --fonts cm
cls-limrow        cls-limrow-lmodern           -      --fonts lmodern
cls-limprime      cls-limprime-lmodern         -      --fonts lmodern
cls-fracnum       cls-fracnum-lmodern          9550   --fonts lmodern
cls-fracnum       cls-fracnum-xe               9550   --engine xelatex --fonts termes-math
cls-fracnum       cls-fracnum-lua              9550   --engine lualatex --fonts pagella-math
cls-namebracket   cls-namebracket-xe           9551   --engine xelatex --fonts libertinus-math
cls-namebracket   cls-namebracket-lua          9551   --engine lualatex --fonts pagella-math
cls-namebracket   cls-namebracket-newtx        9551   --fonts newtx
cls-dsumfrac      cls-dsumfrac-pxfonts         9552   --fonts pxfonts
cls-dsumfrac      cls-dsumfrac-xe              9552   --engine xelatex --fonts termes-math
cls-dsumfrac      cls-dsumfrac-lua             9552   --engine lualatex --fonts termes-math
cls-opside        cls-opside-newtx             9553   --fonts newtx
cls-opside        cls-opside-libertine         9553   --fonts libertine
cls-remarks       cls-remarks-cm               -      --fonts cm
cls-remarks       cls-remarks-times            -      --fonts times
cls-raisedroot    cls-raisedroot-cm            -      --fonts cm
cls-raisedroot    cls-raisedroot-lmodern       -      --fonts lmodern
cls-wordapart     cls-wordapart-cm             -      --fonts cm
cls-wordapart     cls-wordapart-times          -      --fonts times
cls-wordapart     cls-wordapart-stix           -      --fonts stix2
cls-sharp         cls-sharp-cm                 -      --fonts cm
cls-sharp         cls-sharp-newtx              -      --fonts newtx
cls-barrule       cls-barrule-cm               9750   --fonts cm
cls-barrule       cls-barrule-xe               9750   --engine xelatex --fonts termes-math
cls-opgap         cls-opgap-newtx              9650   --fonts newtx
cls-opgap         cls-opgap-txfonts            9650   --fonts txfonts
cls-casesrows     cls-casesrows-xe             9651   --twocolumn --engine xelatex --fonts stix2-math
cls-casesrows     cls-casesrows-lua            9651   --twocolumn --engine lualatex --fonts stix2-math
cls-ordspace      cls-ordspace-cm              9900   --fonts cm
cls-ordspace      cls-ordspace-newtx           9900   --fonts newtx
cls-intdiff       cls-intdiff-newtx            10033  --fonts newtx
cls-intdiff       cls-intdiff-libertine        10033  --fonts libertine
cls-intdiff       cls-intdiff-xe               10033  --engine xelatex --fonts termes-math
crop-widecol      crop-widecol                 -      --twocolumn --fonts cm
cls-fracapart     cls-fracapart-cm             9800   --fonts cm
cls-fracapart     cls-fracapart-times          9800   --fonts times
cls-fracapart     cls-fracapart-xe             9800   --engine xelatex --fonts lm-math
cls-italicsup     cls-italicsup-cm             9801   --fonts cm
cls-italicsup     cls-italicsup-xe             9801   --engine xelatex --fonts lm-math
cls-inlinestyle   cls-inlinestyle-cm           9950   --fonts cm
cls-inlinestyle   cls-inlinestyle-xe           9950   --engine xelatex --fonts lm-math
cls-dispstyle     cls-dispstyle-newtx          10150  --fonts newtx
cls-dispstyle     cls-dispstyle-xe             10150  --engine xelatex --fonts stix2-math
cls-scriptfrac    cls-scriptfrac-cm            10240  --fonts cm
cls-scriptfrac    cls-scriptfrac-xe            10240  --engine xelatex --fonts lm-math

cls-textdisp      cls-textdisp-cm              10010  --fonts cm
cls-textdisp      cls-textdisp-palatino        10010  --fonts palatino
cls-textdisp      cls-textdisp-xe              10010  --engine xelatex --fonts termes-math
cls-substack      cls-substack-lmodern         10011  --fonts lmodern
cls-substack      cls-substack-newtx           10011  --fonts newtx
cls-substack      cls-substack-lua             10011  --engine lualatex --fonts pagella-math
cls-longcond      cls-longcond-kpfonts         10012  --fonts kpfonts
cls-longcond      cls-longcond-xe              10012  --engine xelatex --fonts libertinus-math
cls-dispcross     cls-dispcross-sans           10013  --twocolumn --fonts sans
cls-dispcross     cls-dispcross-cm             10013  --twocolumn --fonts cm
cls-remarkrows    cls-remarkrows-cm            10014  --fonts cm
cls-remarkrows    cls-remarkrows-xe            10014  --engine xelatex --fonts lm-math

cls-units         cls-units-cm                 10100  --fonts cm
cls-units         cls-units-lmodern            10100  --fonts lmodern
cls-units         cls-units-xe                 10100  --engine xelatex --fonts lm-math

# (12 pt: at 10 pt the footnote's fraction was found before detectfix7's fixture too)
cls-footfrac      cls-footfrac-xe              10130  --engine xelatex --fonts dejavu-math --size 12pt
cls-footfrac      cls-footfrac-lua             10130  --engine lualatex --fonts pagella-math --size 12pt
cls-stackparts    cls-stackparts-stix2         10200  --fonts stix2
cls-stackparts    cls-stackparts-newtx         10200  --fonts newtx
cls-stackparts    cls-stackparts-xe            10200  --engine xelatex --fonts termes-math
cls-phrasedisp    cls-phrasedisp-cm            10201  --twocolumn --fonts cm
cls-phrasedisp    cls-phrasedisp-xe            10201  --twocolumn --engine xelatex --fonts pagella-math
cls-phrasedisp    cls-phrasedisp-lua           10201  --twocolumn --engine lualatex --fonts stix2-math
cls-bigdelimwords cls-bigdelimwords-cm         10202  --fonts cm
cls-bigdelimwords cls-bigdelimwords-palatino   10202  --fonts palatino
# detectfix9 (review of detect14t): displays that open with a capitalised word, a framed paragraph
cls-capdisp       cls-capdisp-cm               10255  --fonts cm
cls-capdisp       cls-capdisp-xe               10255  --engine xelatex --fonts termes-math
cls-boxpar        cls-boxpar-cm                10256  --fonts cm
cls-boxpar        cls-boxpar-lua               10256  --engine lualatex --fonts lm-math
cls-centreprose   cls-centreprose-cm           10257  --fonts cm
cls-centreprose   cls-centreprose-xe           10257  --engine xelatex --fonts termes-math

# e2e12r (issue 12): CM/LM formulas pdf-e2e missed or cut
cls-scriptnum     cls-scriptnum-cm             10160  --fonts cm
cls-exactdiff     cls-exactdiff-cm             10161  --fonts cm
cls-condrows      cls-condrows-cm              10162  --fonts cm --twocolumn --size 12pt
cls-wordremark    cls-wordremark-cm            10163  --fonts cm
cls-fracgaps      cls-fracgaps-cm              10164  --fonts cm
cls-alignfrac     cls-alignfrac-cm             10165  --fonts cm --size 11pt
cls-expunit       cls-expunit-cm               10166  --fonts cm --class amsart --size 12pt
cls-scriptnum     cls-scriptnum-lmodern        10160  --fonts lmodern
cls-exactdiff     cls-exactdiff-lmodern        10161  --fonts lmodern
cls-condrows      cls-condrows-lmodern         10162  --fonts lmodern --twocolumn --size 12pt
cls-wordremark    cls-wordremark-lmodern       10163  --fonts lmodern
cls-fracgaps      cls-fracgaps-lmodern         10164  --fonts lmodern
cls-alignfrac     cls-alignfrac-lmodern        10165  --fonts lmodern --size 11pt
cls-expunit       cls-expunit-lmodern          10166  --fonts lmodern --class amsart --size 12pt

# detectfix10 (review of e2e12r): columns of words beside a block that are
# no cases' conditions (prose minipage, notation tables)
cls-condtable     cls-condtable-cm             10270  --fonts cm
cls-condtable     cls-condtable-lmodern        10270  --fonts lmodern

# detectfix11 (review of detectfix9's rules): a display named in lower-case
# words whose fraction Poppler lists as lines of its own; a caption's label;
# the wide row of a left-aligned aligned display set in by slivers
cls-namedfrac     cls-namedfrac-times          10360  --fonts times
cls-namedfrac     cls-namedfrac-cm             10360  --fonts cm
cls-caption       cls-caption-cm               10361  --fonts cm
cls-caption       cls-caption-xe               10361  --engine xelatex --fonts termes-math
cls-alignedge     cls-alignedge-cm             10362  --twocolumn --fonts cm
# (its scanned twins: tests/fixtures/pdf/scan/README.md, scanand)
cls-scanand       cls-scanand-cm               10363  --fonts cm
# scanfix8: fleqn displays flush with the margin, a function word a word space
# from the math (its scanned twin: tests/fixtures/pdf/scan/README.md, fleqn)
cls-scanfleqn     cls-scanfleqn-cm             10520  --fonts cm
# scanmerge: inline formulas a word space apart, operand against operand
# (its scanned twin: tests/fixtures/pdf/scan/README.md, pairs)
cls-scanpairs     cls-scanpairs-cm             10570  --fonts cm
# scanfix9: single inline formulas with word-sized inner spaces (narrow
# relations, a text-style integral, \ln; its scanned twin:
# tests/fixtures/pdf/scan/README.md, narrow)
cls-scannarrow    cls-scannarrow-newtx         10572  --fonts newtx
# scandisp: inline formulas alone on their paragraph's last line (its scanned
# twin: tests/fixtures/pdf/scan/README.md, lastline)
cls-scanlastline  cls-scanlastline-cm          10582  --fonts cm
# scanfix10: inline formulas a word space apart beside norms and absolute
# values read with uneven bars (its scanned twin: tests/fixtures/pdf/scan/README.md, bars)
cls-scanbars      cls-scanbars-times           10680  --fonts times
# scanpair2: inline formulas a word space apart whose facing operand sits
# between an operator's thick space and the word space, or reads as a lone
# misread glyph (its scanned twin: tests/fixtures/pdf/scan/README.md, pair2)
cls-scanpair2     cls-scanpair2-cm             11100  --fonts cm
# scancut: single inline formulas that scans cut in pieces - text-style sums
# whose lower limit ends far from the sign, lists x_1, \dots, x_n (its scanned
# twins: tests/fixtures/pdf/scan/README.md, cut and cutlist)
cls-scancut       cls-scancut-palatino         11500  --fonts palatino
# scanfix10: cls-scanlastline's paragraphs double-spaced (its scanned twin:
# tests/fixtures/pdf/scan/README.md, double)
cls-scandouble    cls-scandouble-cm            10681  --fonts cm
# scanlight: flat fleqn displays with tight display skips, 1.2-1.3 leadings
# under the prose (its scanned twin: tests/fixtures/pdf/scan/README.md, flushtight)
cls-scanflushtight cls-scanflushtight-cm        10670  --fonts cm

# detect14u: a list parted by comma and control space, a lost \amalg after
# a subscript, a script of text listed apart, symbolsC's relations
cls-commalist     cls-commalist-kpfonts        10320  --fonts kpfonts
cls-commalist     cls-commalist-xe             10320  --engine xelatex --fonts libertinus-math
cls-lostamalg     cls-lostamalg-xe             10321  --engine xelatex --fonts fira-math
cls-lostamalg     cls-lostamalg-lua            10321  --engine lualatex --fonts fira-math
cls-scriptapart   cls-scriptapart-euler        10322  --fonts euler
cls-scriptapart   cls-scriptapart-xe           10322  --engine xelatex --fonts bonum-math
cls-sycrel        cls-sycrel-kpfonts           10323  --fonts kpfonts
cls-sycrel        cls-sycrel-txfonts           10323  --fonts txfonts
cls-italicrun     cls-italicrun-palatino       10324  --fonts palatino
cls-italicrun     cls-italicrun-times          10324  --fonts times
cls-wordbracket   cls-wordbracket-xe           10325  --engine xelatex --fonts pagella-math
cls-wordbracket   cls-wordbracket-lua          10325  --engine lualatex --fonts pagella-math

# e2e12s (issue 12): displays named in words with a bracketed remark, a
# relation alone between words of prose
cls-namedremark   cls-namedremark-cm           10280  --fonts cm
cls-namedremark   cls-namedremark-lmodern      10280  --fonts lmodern
cls-namedremark   cls-namedremark-xe           10280  --engine xelatex --fonts lm-math
cls-lonerel       cls-lonerel-cm               10281  --fonts cm
cls-lonerel       cls-lonerel-lmodern          10281  --fonts lmodern
cls-lonerel       cls-lonerel-times            10281  --fonts times

# detect14v (issue 14): displays whose fractions hold words, \text numerators
# and units over units
cls-wordfrac      cls-wordfrac-palatino        10460  --fonts palatino
cls-wordfrac      cls-wordfrac-txfonts         10460  --fonts txfonts
cls-wordfrac      cls-wordfrac-euler           10460  --fonts euler
# words after a \quad beside an aligned display's middle row
cls-rowwords      cls-rowwords-euler           10464  --fonts euler
cls-rowwords      cls-rowwords-palatino        10464  --fonts palatino
# detectfix17 (review of detect14v): a centred prose line with an inline
# display-style sum over a fraction, its words below the sum chunk's middle
cls-sumfrac       cls-sumfrac-cm               10470  --fonts cm
cls-sumfrac       cls-sumfrac-lmodern          10470  --fonts lmodern
# detectfix16 (review of detectfix11 and detect14u): two-line framed
# paragraphs, function applications on squeezed lines, emphasised words
# between math signs
cls-boxtwo        cls-boxtwo-cm                10440  --fonts cm
cls-boxtwo        cls-boxtwo-times             10440  --fonts times
cls-squeeze       cls-squeeze-cm               10441  --fonts cm
cls-squeeze       cls-squeeze-lmodern          10441  --fonts lmodern
cls-emphsigns     cls-emphsigns-times          10442  --fonts times
cls-emphsigns     cls-emphsigns-palatino       10442  --fonts palatino
cls-emphsigns     cls-emphsigns-cm             10442  --fonts cm
# e2e12t (issue 12): an operator name before a number, all in the text font
# (\sinh 0 = 0 in CMR), with typed prose "log 2" a word space apart, and
# limits under a name (\lim\limits_{N\to\infty}); a formula ending in a
# script, a word space before the next ($Y_\infty$ 2024, $a^n$ $\vec{v}$);
# \mapsto, whose CMSY bar Poppler reads as a '7' (z_n \mapsto f(..))
cls-opnum         cls-opnum-cm                 10480  --fonts cm
cls-scriptspace   cls-scriptspace-cm           10481  --fonts cm
cls-mapsto        cls-mapsto-cm                10482  --fonts cm
cls-opnum         cls-opnum-lmodern            10480  --fonts lmodern
cls-scriptspace   cls-scriptspace-lmodern      10481  --fonts lmodern
cls-mapsto        cls-mapsto-lmodern           10482  --fonts lmodern
# detectprec (issue 14): text-style fractions of digits in a text line
# (\frac{1}{2}: pdfLaTeX's text-font digits and a rule, no seed), and a
# numerator and a denominator that Poppler lists as one word
cls-textfrac      cls-textfrac-cm              10600  --fonts cm
cls-textfrac      cls-textfrac-times           10600  --fonts times
# detectprec: cases displays with words in their conditions on a page too
# short for its text margins to be known
cls-casescol      cls-casescol-cm              10601  --fonts cm
cls-casescol      cls-casescol-times           10601  --fonts times
# lead, session v: numbered displays as wide as a column whose formulas a
# word joins a \quad apart each side (\quad\text{in}\quad)
cls-quadword      cls-quadword-lmodern         10690  --twocolumn --fonts lmodern
cls-quadword      cls-quadword-xe              10690  --twocolumn --engine xelatex --fonts termes-math
cls-quadword      cls-quadword-lua             10690  --twocolumn --engine lualatex --fonts termes-math
# detectprec2 (review of detectprec): a cases and a \left\{ ... \right. in a
# text line of a short page, their first row above the line taken for a
# display
cls-inlcases      cls-inlcases-cm              10646  --fonts cm
cls-inlcases      cls-inlcases-newtx           10646  --fonts newtx
cls-inlcases      cls-inlcases-xe              10646  --engine xelatex --fonts stix2-math
# detectfix20 (review findings of detectfix16 and detect14v; detectfix18's
# bodies): aligned rows \jot 0-1 pt apart sharing one edge, and words beside
# an aligned display's row in fonts whose row holds no math glyph
cls-jotrows       cls-jotrows-cm               10630  --twocolumn --fonts cm
cls-jotrows       cls-jotrows-lua              10630  --twocolumn --engine lualatex --fonts lm-math
cls-rowwords      cls-rowwords-cm              10631  --fonts cm
cls-rowwords      cls-rowwords-times           10631  --fonts times
cls-rowwords      cls-rowwords-xe              10631  --engine xelatex --fonts xits-math
# rvfix20 (review of detectfix20): inline formulas starting a line of an
# \fbox{\parbox}, the box's side taken for a lost delimiter
cls-framerule     cls-framerule-cm             11050  --fonts cm
cls-framerule     cls-framerule-palatino       11050  --fonts palatino
cls-framerule     cls-framerule-xe             11050  --engine xelatex --fonts lm-math
# rvprec2 (review of detectprec2): cases displays whose line opens with
# words before the brace, on a short page (margins unknown)
cls-caseswords    cls-caseswords-cm            11000  --fonts cm
cls-caseswords    cls-caseswords-times         11000  --fonts times
cls-caseswords    cls-caseswords-xe            11000  --engine xelatex --fonts stix2-math
cls-caseswords    cls-caseswords-lua           11000  --engine lualatex --fonts libertinus-math
# detectprec3 (issue 14): text-style fractions in a text line in OpenType
# fonts whose denominators are chunks of their own, taken into the next
# line's raised \dfrac numerator's line and made displays
cls-textfrac      cls-textfrac-lua             11350  --engine lualatex --fonts stix2-math
cls-textfrac      cls-textfrac-xe              11350  --engine xelatex --fonts libertinus-math
# detectprec3: an inline cases starting a line, the prose right of its rows
cls-casesstart    cls-casesstart-lua           11351  --engine lualatex --fonts stix2-math
cls-casesstart    cls-casesstart-xe            11351  --engine xelatex --fonts libertinus-math
# detectprec3: a numbered display of an upright acronym and a fraction whose
# stacked parts were not counted among its line's glyphs (two columns, 12 pt)
cls-wordfrac2     cls-wordfrac2-xe             11352  --engine xelatex --fonts stix2-math --twocolumn --size 12pt
cls-wordfrac2     cls-wordfrac2-lua            11352  --engine lualatex --fonts libertinus-math --twocolumn --size 12pt
# detecttext (issue 14): displays whose words are most of the line - a set's
# condition in words, formulas joined by a clause a \quad apart
cls-setwords      cls-setwords-cm              11300  --fonts cm
cls-setwords      cls-setwords-xe              11300  --engine xelatex --fonts stix2-math
cls-setwords      cls-setwords-lua             11300  --engine lualatex --fonts libertinus-math
# detecttext (issue 14): a math letter before a \left delimiter, a thin
# space and the delimiter's sidebearing apart (over 0.4 em)
cls-letterdelim   cls-letterdelim-cm           11301  --fonts cm
cls-letterdelim   cls-letterdelim-libertine    11301  --fonts libertine
# detecttext (issue 14): displays of framed paragraphs joined by math
cls-framedisp     cls-framedisp-cm             11302  --fonts cm
cls-framedisp     cls-framedisp-xe             11302  --engine xelatex --fonts lm-math
cls-framedisp     cls-framedisp-lua            11302  --engine lualatex --fonts termes-math
# detectop (issue 14): an operator name, \, and a letter, as wide apart as
# the line's word space (1/3 em in CM and LM; Libertine's sidebearings)
cls-opthin        cls-opthin-cm                11450  --fonts cm
cls-opthin        cls-opthin-xe                11450  --engine xelatex --fonts lm-math
cls-opthin        cls-opthin-libertine         11450  --fonts libertine
# scanprose: footnotes starting "A" under the footnote rule (its scanned twin:
# tests/fixtures/pdf/scan/README.md, footnote-lost-mark)
cls-scanfootnote  cls-scanfootnote-cm          11561  --fonts cm
# detectinline (issue 14): two inline formulas parted by the sentence's comma
# and a word space ("$x=1$, $y$"), and by a word space after a closing bar
# before a big operator ("$\bigl| f \bigr|$ $\int_0^1 g$", LM Math's U+2223)
cls-sentcomma     cls-sentcomma-libertine      11640  --fonts libertine
cls-sentcomma     cls-sentcomma-newtx          11640  --fonts newtx
cls-sentcomma     cls-sentcomma-xe             11640  --engine xelatex --fonts stix2-math
cls-barop         cls-barop-xe                 11641  --engine xelatex --fonts lm-math
cls-barop         cls-barop-lua                11641  --engine lualatex --fonts lm-math
# detectb2b (issue 14): displays set back to back, parted by their own
# numbers or their spacing unless their rows share a relation's x
cls-b2b           cls-b2b-cm                   11660  --fonts cm
cls-b2b           cls-b2b-xe                   11660  --engine xelatex --fonts lm-math
# detectreal (issue 14): a formula ending in a closing bar or bracket a word
# space before one opening with a radical
cls-barroot       cls-barroot-newtx            11670  --fonts newtx
cls-barroot       cls-barroot-libertine        11670  --fonts libertine
# detectreal (issue 14): list labels and footnote marks that open a line of
# running text, \fnsymbol's star after a word
cls-linemarks     cls-linemarks-cm             11671  --fonts cm
cls-linemarks     cls-linemarks-xe             11671  --engine xelatex --fonts lm-math
# detectreal (issue 14): meta-variables with digits, underscores, two words;
# docstrip's guards in listings
cls-metavars      cls-metavars-cm              11672  --fonts cm
cls-metavars      cls-metavars-xe              11672  --engine xelatex --fonts lm-math
# detectreal (issue 14): section and paragraph signs from CMSY before a number
cls-sectsign      cls-sectsign-cm              11673  --fonts cm
FIXTURES
if [ $made -eq 0 ]; then
  echo "make-class-fixtures.sh: no fixture's prefix matches $*" >&2
  exit 1
fi
echo "make-class-fixtures.sh: $made fixtures made in $dir"
