#include "commands.h"

namespace deberta::cli {

void register_commands(CLI::App* app) {
  register_dump(app);
}

}  // namespace deberta::cli
