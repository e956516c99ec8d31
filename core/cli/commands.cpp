#include "commands.h"

namespace deberta::cli {

void register_commands(CLI::App* app) {
  register_dump(app);
  register_tokenize(app);
  register_predict(app);
  register_ablate(app);
  register_explain(app);
  register_bench(app);
  register_eval_mlm(app);
  register_eval(app);
  register_compare(app);
  register_diff(app);
  register_classify(app);
  register_rtd(app);
}

}  // namespace deberta::cli
