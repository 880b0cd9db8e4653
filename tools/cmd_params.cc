// symbind params FILE: the arrays of an MXNet .params file or of a .symbind model.
#include <iostream>

#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>

#include "commands.h"

namespace symbind_tool {

void AddParamsCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("params", "list the arrays of a .params file or .symbind model");
  sub->add_option("FILE", *file, ".params file (any MXNet layout) or .symbind model")->required();
  sub->callback([file] {
    if (!symbind::IsModelFile(*file)) {
      symbind::NDArrayLoadOptions listing;
      listing.densify_sparse = false;  // shapes come from the headers
      return symbind::PrintParamsListing(symbind::LoadNDArrayFile(*file, listing), std::cout);
    }
    symbind::Model model = symbind::LoadModel(*file);
    symbind::NDArrayFile listing;
    for (auto& kv : symbind::MergeArgAux(model.args, model.aux)) {
      listing.names.push_back(kv.first);
      listing.arrays.push_back(kv.second);
    }
    symbind::PrintParamsListing(listing, std::cout, "symbind");
  });
}

}  // namespace symbind_tool
