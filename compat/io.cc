#include "mxnet-cpp/io.h"

#include <symbind/io/data_iter.h>

#include "compat_internal.h"

namespace mxnet {
namespace cpp {

// An unknown type fails here, as MXNet's MXDataIter fails at construction.
MXDataIter::MXDataIter(const std::string& mxdataiter_type) try : type_(mxdataiter_type) {
  symbind::FindDataIter(type_);
} SYMBIND_CPP_RECORD_ERRORS
MXDataIter::~MXDataIter() = default;

MXDataIter MXDataIter::CreateDataIter() try {
  impl_ = std::make_shared<DataIterImpl>();
  impl_->iter = symbind::CreateDataIter(type_, params_);
  return *this;
} SYMBIND_CPP_RECORD_ERRORS

DataIterImpl& MXDataIter::Impl() try {
  if (!impl_) CreateDataIter();
  return *impl_;
} SYMBIND_CPP_RECORD_ERRORS

void MXDataIter::BeforeFirst() try { Impl().iter->Reset(); } SYMBIND_CPP_RECORD_ERRORS
bool MXDataIter::Next() try { return Impl().iter->Next(); } SYMBIND_CPP_RECORD_ERRORS
NDArray MXDataIter::GetData() try { return compat::Wrap(Impl().iter->data()); } SYMBIND_CPP_RECORD_ERRORS
NDArray MXDataIter::GetLabel() try { return compat::Wrap(Impl().iter->label()); } SYMBIND_CPP_RECORD_ERRORS
int MXDataIter::GetPadNum() try { return Impl().iter->pad(); } SYMBIND_CPP_RECORD_ERRORS
std::vector<int> MXDataIter::GetIndex() try {
  std::vector<int64_t> index = Impl().iter->index();
  return std::vector<int>(index.begin(), index.end());
} SYMBIND_CPP_RECORD_ERRORS

}  // namespace cpp
}  // namespace mxnet
