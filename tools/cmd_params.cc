// symbind params FILE: the arrays of an MXNet .params file.
#include <iostream>

#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

void AddParamsCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("params", "list the arrays of a .params file");
  sub->add_option("FILE", *file, ".params file (any MXNet layout)")->required();
  sub->callback([file] {
    symbind::NDArrayLoadOptions listing;
    listing.densify_sparse = false;  // shapes come from the headers
    symbind::PrintParamsListing(symbind::LoadNDArrayFile(*file, listing), std::cout);
  });
}

}  // namespace symbind_tool
