// libFuzzer target: the symbol JSON loader, and save/load of whatever it accepts.
#include <string>

#include <symbind/io/symbol_json.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  symbind::Symbol s;
  try {
    s = symbind::LoadSymbolJSON(text);
  } catch (const symbind::Error&) {
    return 0;
  }
  // The graph may still be unusable (a cycle cannot be built from JSON, but ops may reject
  // their inputs); saving it either works and loads back or throws symbind::Error.
  try {
    const std::string saved = symbind::SaveSymbolJSON(s);
    symbind::Symbol back = symbind::LoadSymbolJSON(saved);
    if (symbind::SaveSymbolJSON(back) != saved) __builtin_trap();
    if (back.ListArguments() != s.ListArguments()) __builtin_trap();
  } catch (const symbind::Error&) {
  }
  return 0;
}
