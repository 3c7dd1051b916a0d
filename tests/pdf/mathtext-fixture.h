/* mathtext-fixture.h - opening the text-layer reader's fixture PDFs and
 * reading a whole page as one display region (test-mathtext and
 * test-mathtext-align). */
#pragma once

#include "fm-document.h"
#include "fm-mathtext.h"

/* tests/fixtures/pdf/NAME, opened (asserts on failure). */
FmDocument *mathtext_fixture_open (const char *name);

/* The reader's result for the whole of page `page` as one display region
 * (the fixtures use \pagestyle{empty}: the formula is the page's only ink). */
FmMathTextResult *mathtext_fixture_read_page (FmDocument *doc, int page);
