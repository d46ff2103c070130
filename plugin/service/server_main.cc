// graph-ascend-server: serves the .vis files under a log directory over gRPC.
//
//   graph-ascend-server --logdir DIR (--socket PATH | --port N [--port-file F])
//                       [--die-after-stdin] [--cache-mb N] [--cache-dir DIR]
//                       [--allow-convert auto|on|off] [--builder PATH]
//
// Started by the TensorBoard plugin as a child on a Unix socket in a private
// directory. It exits when stdin reaches EOF (--die-after-stdin: the parent
// holds the pipe, so it closes when the parent dies, however it dies), when
// the parent process dies (checked on PR_SET_PDEATHSIG and every second), or
// on SIGTERM/SIGINT/SIGHUP, at most a few seconds later however busy. The
// kernel sends the parent-death signal when the *thread* that started the
// server exits, and TensorBoard starts it from a request thread, so that
// signal only triggers a check of getppid().
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "base/version.h"
#include "graph_service.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

// Leaves without destructors (detached threads still reference the server).
// _exit skips the leak check LeakSanitizer makes in exit(): a sanitizer build
// (scripts/test-sanitizers.sh) makes it here, the service still alive, so
// that what the requests lost is reported (exit 23) and what is held is not.
// Only the standard streams are flushed: fflush(nullptr) takes every stream's
// lock, and a handler stuck inside a write to its own file (a stalled disk)
// holds that lock for as long as it is stuck.
[[noreturn]] void Leave() {
  std::fflush(stdout);
  std::fflush(stderr);
#if defined(__SANITIZE_ADDRESS__)
  __lsan_do_leak_check();
#endif
  _exit(0);
}

// Seconds between a termination request and the exit, busy handlers or not.
constexpr int kShutdownGraceSeconds = 3;

int Usage(const char* why) {
  std::fprintf(stderr,
               "graph-ascend-server: %s\n"
               "usage: graph-ascend-server --logdir DIR (--socket PATH | --port N [--port-file FILE])\n"
               "                           [--die-after-stdin] [--cache-mb N] [--cache-dir DIR]\n"
               "                           [--allow-convert auto|on|off] [--builder PATH]\n"
               "  --allow-convert   conversions of dumps from the page; auto (default): on when the log\n"
               "                    directory belongs to the user running the server\n"
               "  --builder PATH    the graph-ascend executable conversions run (default: beside this one)\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string logdir, socket_path, port_file, cache_dir, builder_path, allow_convert = "auto";
  int port = -1;
  bool die_after_stdin = false;
  long cache_mb = 4096;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "graph-ascend-server: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--logdir") {
      logdir = value("--logdir");
    } else if (a == "--socket") {
      socket_path = value("--socket");
    } else if (a == "--port") {
      port = std::atoi(value("--port"));
    } else if (a == "--port-file") {
      port_file = value("--port-file");
    } else if (a == "--die-after-stdin") {
      die_after_stdin = true;
    } else if (a == "--cache-dir") {
      cache_dir = value("--cache-dir");  // msprobe files converted for opening; outside the log directory
    } else if (a == "--allow-convert") {
      allow_convert = value("--allow-convert");
    } else if (a == "--builder") {
      builder_path = value("--builder");
    } else if (a == "--cache-mb") {
      cache_mb = std::atol(value("--cache-mb"));
    } else if (a == "--version") {
      std::printf("graph-ascend-server %s\n", graph_ascend::kVersion);
      return 0;
    } else {
      return Usage(("unknown argument " + a).c_str());
    }
  }
  if (logdir.empty()) return Usage("--logdir is required");
  if (socket_path.empty() == (port < 0)) return Usage("give exactly one of --socket and --port");
  if (cache_mb <= 0) return Usage("--cache-mb must be positive");
  if (allow_convert != "auto" && allow_convert != "on" && allow_convert != "off") {
    return Usage("--allow-convert takes auto, on or off");
  }

  // Die with the parent; handle termination signals on one thread.
  const pid_t parent = getppid();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid() != parent) return 0;

  graph_ascend::service::ServiceOptions options;
  options.logdir = logdir;
  options.cache_bytes = static_cast<size_t>(cache_mb) << 20;
  options.cache_dir = cache_dir;
  options.builder = builder_path;
  using Convert = graph_ascend::service::ServiceOptions::Convert;
  options.allow_convert = allow_convert == "on"    ? Convert::kOn
                          : allow_convert == "off" ? Convert::kOff
                                                   : Convert::kAuto;
  auto service = graph_ascend::service::GraphServiceImpl::Create(options);
  if (!service.ok()) {
    std::fprintf(stderr, "graph-ascend-server: %s\n", service.error().ToString().c_str());
    return 1;
  }

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(256 << 20);
  int bound_port = 0;
  std::string address;
  if (!socket_path.empty()) {
    struct stat st;
    if (lstat(socket_path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(socket_path.c_str());
    address = "unix:" + socket_path;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  } else {
    address = "127.0.0.1:" + std::to_string(port);
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound_port);
  }
  builder.RegisterService(service->get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::fprintf(stderr, "graph-ascend-server: cannot listen on %s\n", address.c_str());
    return 1;
  }
  if (!port_file.empty()) {
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << bound_port << "\n";
    rename(tmp.c_str(), port_file.c_str());
  }
  std::fprintf(stderr, "graph-ascend-server %s: serving %s on %s\n", graph_ascend::kVersion, logdir.c_str(),
               socket_path.empty() ? ("127.0.0.1:" + std::to_string(bound_port)).c_str() : address.c_str());

  std::once_flag shutdown_once;
  auto shutdown = [&] {
    std::call_once(shutdown_once, [&] {
      // Shutdown() cancels the calls still running after its deadline but
      // waits for their handlers to return; a handler busy for minutes (a
      // huge search) must not keep the process alive: leave after a grace.
      std::thread([socket_path, &service] {
        std::this_thread::sleep_for(std::chrono::seconds(kShutdownGraceSeconds));
        // Handlers still run: what they were writing must not stay behind.
        (*service)->RemoveTemporaries();
        if (!socket_path.empty()) unlink(socket_path.c_str());
        Leave();
      }).detach();
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    });
  };
  std::thread signal_thread([&] {
    while (true) {
      int sig = 0;
      sigwait(&signals, &sig);
      if (sig != SIGUSR1 || getppid() != parent) break;
    }
    shutdown();
  });
  signal_thread.detach();
  std::thread parent_thread([&] {
    while (getppid() == parent) std::this_thread::sleep_for(std::chrono::seconds(1));
    shutdown();
  });
  parent_thread.detach();
  if (die_after_stdin) {
    std::thread stdin_thread([&] {
      char buf[256];
      while (read(STDIN_FILENO, buf, sizeof(buf)) > 0) {
      }
      shutdown();
    });
    stdin_thread.detach();
  }
  server->Wait();
  (*service)->RemoveTemporaries();
  if (!socket_path.empty()) unlink(socket_path.c_str());
  Leave();
}
