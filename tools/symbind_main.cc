// symbind: inspect MXNet model files. Run `symbind --help` for the subcommands.
#include <poll.h>

#include <csignal>
#include <exception>
#include <new>
#include <iostream>
#include <string>

#include <symbind/executor/executor.h>

#include "commands.h"
#include "symbind_version.h"

namespace {

// True when standard output is a pipe whose reader has gone (`symbind params x | head -1`):
// Linux reports POLLERR on the write end then.
bool OutputReaderClosed() {
  pollfd out{1, POLLOUT, 0};
  return ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR) != 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Output piped into `head` must not end the tool by a signal: the failed write is seen below.
  // A reader that stopped reading ends the tool quietly with status 0; any other failed write
  // (a full disk) is an error.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    CLI::App app{"symbind: inspect, convert and run MXNet models (.params, symbol JSON, .symbind)", "symbind"};
    app.set_version_flag("--version", "symbind " SYMBIND_VERSION " (libmxnet.so: MXNet " SYMBIND_MXNET_API_VERSION
                                      " API, MXGetVersion " +
                                          std::to_string(SYMBIND_MXNET_API_VERSION_CODE) + ")");
    app.require_subcommand(1);
    symbind_tool::AddParamsCommand(app);
    symbind_tool::AddShapesCommand(app);
    symbind_tool::AddSummaryCommand(app);
    symbind_tool::AddDotCommand(app);
    symbind_tool::AddRunCommand(app);
    symbind_tool::AddConvertCommand(app);
    symbind_tool::AddQuantizeCommand(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return 0;
    } catch (const CLI::CallForVersion& e) {
      std::cout << e.what() << "\n";
      return 0;
    } catch (const CLI::ParseError& e) {
      std::cerr << "symbind: error: " << e.what() << " (run 'symbind --help')\n";
      return 1;
    }
    std::cout.flush();
    if (!std::cout) {
      if (OutputReaderClosed()) return 0;
      std::cerr << "symbind: error: cannot write the output\n";
      return 1;
    }
    return 0;
  } catch (const std::bad_alloc&) {
    std::cerr << "symbind: error: " << symbind::OutOfMemoryMessage("symbind") << "\n";
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (auto& c : msg)
      if (c == '\n') c = ' ';
    std::cerr << "symbind: error: " << msg << "\n";
  } catch (...) {
    std::cerr << "symbind: error: unknown failure\n";
  }
  return 1;
}
