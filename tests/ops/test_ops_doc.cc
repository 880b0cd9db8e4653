// docs/ops.md is generated from the registry; this test fails when it drifts.
#include <symbind/core/op_docs.h>

#include "doc_test_util.h"

TEST_CASE("docs/ops.md matches the operator registry", "[docs]") {
  symbind::test::CheckGeneratedDoc("docs/ops.md", symbind::OperatorsMarkdown(), "[docs]");
}
