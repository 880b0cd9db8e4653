#include "mxnet-cpp/io.h"

#include <symbind/io/data_iter.h>

namespace mxnet {
namespace cpp {

// An unknown type fails here, as MXNet's MXDataIter fails at construction.
MXDataIter::MXDataIter(const std::string& mxdataiter_type) : type_(mxdataiter_type) {
  symbind::FindDataIter(type_);
}
MXDataIter::~MXDataIter() = default;

MXDataIter MXDataIter::CreateDataIter() {
  impl_ = symbind::CreateDataIter(type_, params_);
  return *this;
}

symbind::DataIter& MXDataIter::Impl() {
  if (!impl_) CreateDataIter();
  return *impl_;
}

void MXDataIter::BeforeFirst() { Impl().Reset(); }
bool MXDataIter::Next() { return Impl().Next(); }
NDArray MXDataIter::GetData() { return NDArray(Impl().data()); }
NDArray MXDataIter::GetLabel() { return NDArray(Impl().label()); }
int MXDataIter::GetPadNum() { return Impl().pad(); }
std::vector<int> MXDataIter::GetIndex() {
  std::vector<int64_t> index = Impl().index();
  return std::vector<int>(index.begin(), index.end());
}

}  // namespace cpp
}  // namespace mxnet
