// dmlc-core's locale-independent string to number conversions, as MXNet programs call them.
#ifndef DMLC_STRTONUM_H_
#define DMLC_STRTONUM_H_

#include <cstdlib>
#include <string>

namespace dmlc {

inline float strtof(const char* nptr, char** endptr) { return std::strtof(nptr, endptr); }
inline double strtod(const char* nptr, char** endptr) { return std::strtod(nptr, endptr); }
inline float stof(const std::string& value, size_t* pos = nullptr) { return std::stof(value, pos); }
inline double stod(const std::string& value, size_t* pos = nullptr) { return std::stod(value, pos); }

}  // namespace dmlc

#endif  // DMLC_STRTONUM_H_
