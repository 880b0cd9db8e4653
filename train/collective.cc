#include <symbind/train/collective.h>

#include <dlfcn.h>

#include <mutex>
#include <string>

#include <symbind/core/error.h>

namespace symbind {

namespace {

constexpr const char* kPluginName = "libsymbind_mpi.so";

// The MPI plugin sits next to this library (build tree and installed prefix alike).
std::string PluginPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&Collective::Available), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + kPluginName;
  }
  return kPluginName;
}

struct Plugin {
  std::string path;
  Collective* (*world)() = nullptr;
  std::string error;  // why it cannot be loaded
};

const Plugin& LoadPlugin() {
  static Plugin plugin;
  static std::once_flag once;
  std::call_once(once, [] {
    plugin.path = PluginPath();
    // RTLD_GLOBAL: Open MPI loads its own components with dlopen and needs libmpi's symbols.
    void* handle = dlopen(plugin.path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      const char* why = dlerror();
      plugin.error = why ? why : "unknown dlopen failure";
      return;
    }
    plugin.world = reinterpret_cast<Collective* (*)()>(dlsym(handle, "symbind_mpi_world"));
    if (!plugin.world) plugin.error = plugin.path + " has no symbind_mpi_world";
  });
  return plugin;
}

}  // namespace

bool Collective::Available() { return LoadPlugin().world != nullptr; }

Collective& Collective::World() {
  const Plugin& plugin = LoadPlugin();
  if (!plugin.world)
    throw Error(StrCat(
        "KVStore dist_sync needs MPI, through symbind's MPI plugin ", plugin.path,
        ", which cannot be loaded: ", plugin.error,
        ". Install Open MPI (Debian: apt-get install libopenmpi-dev openmpi-bin), build symbind "
        "with it (CMake then finds MPI, turns SYMBIND_MPI on and builds the plugin) and start the "
        "workers with mpirun"));
  return *plugin.world();
}

}  // namespace symbind
