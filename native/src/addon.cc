// SPDX-License-Identifier: UNLICENSED
// N-API entry. `launch(request)` returns a Promise; the launch runs on a
// thread of its own (never the JS thread, never libuv's small pool, which a
// long workload would starve) and the result comes back through a
// thread-safe function. Nothing here forks: the helper is started with
// posix_spawn (clone(CLONE_VM|CLONE_VFORK)) from that thread.
#include <napi.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/fs.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <thread>
#include <vector>
#include <unistd.h>

extern "C" {
#include "launch.h"
}

namespace {

// Test seam (native/SECURITY.md): a launch request may name cgroup files whose
// post-run counter reads fail, only when this variable was "1" in the
// process's environment when the addon loaded. Read once at load: nothing a
// workload or the hub sends can turn it on, and setting it later does not.
bool g_fault_injection = false;
constexpr const char* kFaultInjectionEnv = "LEASEHOLD_NATIVE_FAULT_INJECTION";

struct Job;
void ResolveOnJsThread(Napi::Env env, Napi::Function, std::nullptr_t*, Job* job);
using Tsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, Job, ResolveOnJsThread>;

struct Progress {
  uint64_t out, err;
};
Napi::Value U64(Napi::Env env, uint64_t v);
void ProgressOnJsThread(Napi::Env env, Napi::Function callback, std::nullptr_t*, Progress* p) {
  if (env != nullptr && !callback.IsEmpty()) callback.Call({U64(env, p->out), U64(env, p->err)});
  delete p;
}
using ProgressTsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, Progress, ProgressOnJsThread>;

struct Job {
  explicit Job(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise::Deferred deferred;
  Tsfn tsfn;
  ProgressTsfn progress;
  bool has_progress = false;
  lh_launch_request req{};
  lh_launch_result res{};
  std::string config, stdin_bytes;
  std::string bpf_exec, bpf_egress;  // packed lh_bpf_file / lh_bpf_rule records (native/bpf-abi.ts)
};

// Running launches that may be cancelled, by lease id: the eventfd their
// launch thread polls (launch.h `cancel_fd`). The thread removes its entry
// under the lock before closing the descriptor, so CancelLaunch never writes
// to a descriptor that was closed and perhaps reused.
std::mutex g_cancel_lock;
std::map<std::string, int> g_cancel_fds;

void ForgetCancel(const std::string& lease, int fd) {
  if (fd < 0) return;
  {
    std::lock_guard<std::mutex> hold(g_cancel_lock);
    g_cancel_fds.erase(lease);
  }
  close(fd);
}

uint64_t GetU64(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsBigInt()) {
    bool lossless = true;
    return v.As<Napi::BigInt>().Uint64Value(&lossless);
  }
  return static_cast<uint64_t>(v.As<Napi::Number>().DoubleValue());
}

Napi::Value U64(Napi::Env env, uint64_t v) {
  // Kernel files say "unlimited" with a huge number: keep it exact.
  if (v > (1ULL << 53)) return Napi::BigInt::New(env, v);
  return Napi::Number::New(env, static_cast<double>(v));
}

// On the launch thread. Never blocks it: when the JS thread is behind and the
// small queue is full, this report is dropped (a later one carries the totals).
void EmitProgress(void* ctx, uint64_t out_total, uint64_t err_total) {
  auto* job = static_cast<Job*>(ctx);
  auto* p = new Progress{out_total, err_total};
  if (job->progress.NonBlockingCall(p) != napi_ok) delete p;
}

Napi::Array DenialsToJs(Napi::Env env, const lh_bpf_denial* ds, size_t n) {
  Napi::Array denials = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    const lh_bpf_denial& d = ds[i];
    Napi::Object x = Napi::Object::New(env);
    x.Set("kind", Napi::Number::New(env, d.kind));
    x.Set("pid", Napi::Number::New(env, d.pid));
    x.Set("family", Napi::Number::New(env, d.family));
    x.Set("proto", Napi::Number::New(env, d.proto));
    x.Set("port", Napi::Number::New(env, d.port));
    x.Set("addr", Napi::Buffer<uint8_t>::Copy(env, d.addr, sizeof d.addr));
    x.Set("dev", U64(env, d.dev));
    x.Set("ino", U64(env, d.ino));
    x.Set("comm", Napi::String::New(env, d.comm, strnlen(d.comm, sizeof d.comm)));
    denials.Set(static_cast<uint32_t>(i), x);
  }
  return denials;
}

void ResolveOnJsThread(Napi::Env env, Napi::Function, std::nullptr_t*, Job* job) {
  if (env != nullptr) {
    const lh_launch_result& r = job->res;
    Napi::Object o = Napi::Object::New(env);
    o.Set("failed", Napi::Boolean::New(env, r.failed != 0));
    o.Set("failStage", Napi::String::New(env, r.fail_stage));
    o.Set("failErrno", Napi::Number::New(env, r.fail_errno));
    o.Set("failMessage", Napi::String::New(env, r.fail_message));
    o.Set("execErrno", Napi::Number::New(env, r.exec_errno));
    o.Set("reportedExit", Napi::Boolean::New(env, r.reported_exit != 0));
    o.Set("exitCode", Napi::Number::New(env, r.exit_code));
    o.Set("termSignal", Napi::Number::New(env, r.term_signal));
    o.Set("timedOut", Napi::Boolean::New(env, r.timed_out != 0));
    o.Set("cancelled", Napi::Boolean::New(env, r.cancelled != 0));
    o.Set("helperStatus", Napi::Number::New(env, r.helper_status));
    o.Set("stdout", Napi::Buffer<char>::Copy(env, r.out ? r.out : "", r.out_len));
    o.Set("stdoutTotal", U64(env, r.out_total));
    o.Set("stderr", Napi::Buffer<char>::Copy(env, r.err ? r.err : "", r.err_len));
    o.Set("stderrTotal", U64(env, r.err_total));
    o.Set("readback", Napi::String::New(env, r.readback, r.readback_len));
    o.Set("sandboxPid", Napi::Number::New(env, r.sandbox_pid));
    o.Set("wallMs", Napi::Number::New(env, r.wall_ms));
    o.Set("setupMs", Napi::Number::New(env, r.setup_ms));
    o.Set("cpuUserMs", Napi::Number::New(env, r.cpu_user_ms));
    o.Set("cpuSysMs", Napi::Number::New(env, r.cpu_sys_ms));
    Napi::Object cg = Napi::Object::New(env);
    cg.Set("memoryPath", Napi::String::New(env, r.cgroup.memory));
    cg.Set("pidsPath", Napi::String::New(env, r.cgroup.pids));
    cg.Set("cpuPath", Napi::String::New(env, r.cgroup.cpu));
    cg.Set("v2Path", Napi::String::New(env, r.cgroup.v2));
    cg.Set("v2Id", U64(env, r.cgroup.v2_id));
    cg.Set("hierarchy", Napi::String::New(env, r.cgroup.mode == LH_CG_V2 ? "v2" : "v1"));
    cg.Set("memoryLimit", U64(env, r.cgroup.readback.memory_bytes));
    cg.Set("memswLimit", U64(env, r.cgroup.memsw_readback));
    cg.Set("pidsMax", U64(env, r.cgroup.readback.pids_max));
    cg.Set("cpuQuotaUs", U64(env, r.cgroup.readback.cpu_quota_us));
    cg.Set("cpuPeriodUs", U64(env, r.cgroup.readback.cpu_period_us));
    // A counter that was not read is null (never 0) and listed in `unread`
    // with its file, so the evidence can say what it does not know.
    static const struct { int idx; const char* name; } kCounters[] = {
        {LH_STAT_OOM_KILL, "oomKill"},          {LH_STAT_MEMORY_FAILCNT, "memoryFailcnt"},
        {LH_STAT_MEMORY_MAX_USAGE, "memoryMaxUsage"}, {LH_STAT_PIDS_EVENTS_MAX, "pidsEventsMax"},
        {LH_STAT_CPU_NR_PERIODS, "cpuNrPeriods"}, {LH_STAT_CPU_NR_THROTTLED, "cpuNrThrottled"},
        {LH_STAT_CPU_THROTTLED_NS, "cpuThrottledNs"},
    };
    Napi::Array unread = Napi::Array::New(env);
    for (const auto& c : kCounters) {
      if (r.stats.err[c.idx] == 0) {
        cg.Set(c.name, U64(env, r.stats.value[c.idx]));
        continue;
      }
      cg.Set(c.name, env.Null());
      Napi::Object u = Napi::Object::New(env);
      u.Set("counter", Napi::String::New(env, c.name));
      u.Set("file", Napi::String::New(env, r.stats.file[c.idx] ? r.stats.file[c.idx] : ""));
      u.Set("key", r.stats.key[c.idx] ? Napi::Value(Napi::String::New(env, r.stats.key[c.idx])) : env.Null());
      u.Set("errno", Napi::Number::New(env, r.stats.err[c.idx]));
      unread.Set(unread.Length(), u);
    }
    cg.Set("unread", unread);
    cg.Set("withdrawnEmpty", Napi::Boolean::New(env, r.withdrawn_empty != 0));
    cg.Set("withdrawnRemoved", Napi::Boolean::New(env, r.withdrawn_removed != 0));
    o.Set("cgroup", cg);
    Napi::Object bpf = Napi::Object::New(env);
    bpf.Set("enforced", Napi::Boolean::New(env, r.bpf_enforced != 0));
    bpf.Set("withdrawn", Napi::Boolean::New(env, r.bpf_withdrawn != 0));
    bpf.Set("dropped", U64(env, r.bpf_dropped));
    bpf.Set("denials", DenialsToJs(env, r.bpf_denials, r.bpf_n_denials));
    o.Set("bpf", bpf);
    job->deferred.Resolve(o);
  }
  lh_launch_free(&job->res);
  delete job;
}

Napi::Value Launch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    Napi::TypeError::New(env, "launch(request) expects an object").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Object in = info[0].As<Napi::Object>();
  auto* job = new Job(env);
  std::string helper = in.Get("helper").As<Napi::String>().Utf8Value();
  std::string lease = in.Get("leaseId").As<Napi::String>().Utf8Value();
  if (helper.size() >= sizeof job->req.helper_path || lease.size() >= sizeof job->req.lease_id || lease.empty()) {
    delete job;
    Napi::RangeError::New(env, "helper path or lease id too long").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::strcpy(job->req.helper_path, helper.c_str());
  std::strcpy(job->req.lease_id, lease.c_str());
  Napi::Buffer<char> cfg = in.Get("config").As<Napi::Buffer<char>>();
  job->config.assign(cfg.Data(), cfg.Length());
  Napi::Value stdinV = in.Get("stdin");
  if (stdinV.IsBuffer()) {
    auto b = stdinV.As<Napi::Buffer<char>>();
    job->stdin_bytes.assign(b.Data(), b.Length());
  }
  job->req.config = job->config.data();
  job->req.config_len = job->config.size();
  job->req.stdin_buf = job->stdin_bytes.data();
  job->req.stdin_len = job->stdin_bytes.size();
  job->req.stdout_max = GetU64(in, "stdoutMax");
  job->req.stderr_max = GetU64(in, "stderrMax");
  job->req.timeout_ms = GetU64(in, "timeoutMs");
  job->req.limits.memory_bytes = GetU64(in, "memoryBytes");
  job->req.limits.pids_max = GetU64(in, "pidsMax");
  job->req.limits.cpu_quota_us = GetU64(in, "cpuQuotaUs");
  job->req.limits.cpu_period_us = GetU64(in, "cpuPeriodUs");
  Napi::Value faults = in.Get("faultUnreadable");
  if (!faults.IsUndefined()) {
    std::string list = faults.IsString() ? faults.As<Napi::String>().Utf8Value() : std::string("\x01");
    const char* why = nullptr;
    if (!g_fault_injection) why = "fault injection is off (LEASEHOLD_NATIVE_FAULT_INJECTION=1 was not set when the addon loaded)";
    else if (list.size() >= sizeof job->req.fault_unreadable ||
             list.find_first_not_of("abcdefghijklmnopqrstuvwxyz_. ") != std::string::npos)
      why = "faultUnreadable must be cgroup file names separated by spaces";
    if (why != nullptr) {
      delete job;
      Napi::Error::New(env, why).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::strcpy(job->req.fault_unreadable, list.c_str());
  }
  job->req.net_egress = in.Get("netEgress").ToBoolean().Value() ? 1 : 0;
  // A BPF lease: packed records whose layout native/bpf-abi.ts shares with
  // bpf_guard.h (checked by bpf/lease_abi.test.ts).
  Napi::Value bpfV = in.Get("bpf");
  if (bpfV.IsObject()) {
    Napi::Object b = bpfV.As<Napi::Object>();
    Napi::Value ex = b.Get("exec"), eg = b.Get("egress");
    const char* why = nullptr;
    if (!ex.IsBuffer() || !eg.IsBuffer()) why = "bpf.exec and bpf.egress must be Buffers";
    else if (ex.As<Napi::Buffer<char>>().Length() % sizeof(lh_bpf_file) != 0 ||
             eg.As<Napi::Buffer<char>>().Length() % sizeof(lh_bpf_rule) != 0)
      why = "bpf.exec / bpf.egress are not whole records";
    if (why != nullptr) {
      delete job;
      Napi::TypeError::New(env, why).ThrowAsJavaScriptException();
      return env.Undefined();
    }
    auto exb = ex.As<Napi::Buffer<char>>();
    auto egb = eg.As<Napi::Buffer<char>>();
    job->bpf_exec.assign(exb.Data(), exb.Length());
    job->bpf_egress.assign(egb.Data(), egb.Length());
    job->req.bpf = 1;
    job->req.bpf_exec_enforced = b.Get("execEnforced").ToBoolean().Value() ? 1 : 0;
    job->req.bpf_net_enforced = b.Get("netEnforced").ToBoolean().Value() ? 1 : 0;
    job->req.bpf_exec = reinterpret_cast<const lh_bpf_file*>(job->bpf_exec.data());
    job->req.bpf_n_exec = job->bpf_exec.size() / sizeof(lh_bpf_file);
    job->req.bpf_egress = reinterpret_cast<const lh_bpf_rule*>(job->bpf_egress.data());
    job->req.bpf_n_egress = job->bpf_egress.size() / sizeof(lh_bpf_rule);
  }
  Napi::Value onProgress = in.Get("onProgress");
  if (onProgress.IsFunction()) {
    job->progress = ProgressTsfn::New(env, onProgress.As<Napi::Function>(), "leasehold-launch-progress", 8, 1, nullptr);
    job->has_progress = true;
    job->req.progress = EmitProgress;
    job->req.progress_ctx = job;
    job->req.progress_every_ms = GetU64(in, "progressEveryMs");
  }
  job->req.cancel_fd = -1;
  if (in.Get("cancellable").ToBoolean().Value()) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) {
      if (job->has_progress) job->progress.Release();
      delete job;
      Napi::Error::New(env, "eventfd for the launch's cancel failed").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    std::lock_guard<std::mutex> hold(g_cancel_lock);
    if (!g_cancel_fds.emplace(lease, fd).second) {
      close(fd);
      if (job->has_progress) job->progress.Release();
      delete job;
      Napi::Error::New(env, "a launch with this lease id is already running").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    job->req.cancel_fd = fd;
  }
  job->tsfn = Tsfn::New(env, "leasehold-launch", 0, 1, nullptr);
  Napi::Promise promise = job->deferred.Promise();
  try {
    std::thread([job]() {
      lh_launch(&job->req, &job->res);
      ForgetCancel(job->req.lease_id, job->req.cancel_fd);
      // lh_launch calls no progress after it returns: the progress function can go.
      if (job->has_progress) job->progress.Release();
      Tsfn tsfn = job->tsfn;
      tsfn.BlockingCall(job);
      tsfn.Release();
    }).detach();
  } catch (...) {
    ForgetCancel(job->req.lease_id, job->req.cancel_fd);
    if (job->has_progress) job->progress.Release();
    job->tsfn.Release();
    job->deferred.Reject(Napi::Error::New(env, "could not start launch thread").Value());
    // job is leaked deliberately: the TSFN finaliser may still reference it.
  }
  return promise;
}

// Cancels a running launch started with `cancellable: true`: its launch
// thread kills the lease's cgroup at its next poll wake-up (at once). True
// when such a launch was running; false when none is (never started, or
// already withdrawn) — the caller then has nothing left to stop.
Napi::Value CancelLaunch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "cancelLaunch(leaseId) expects a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string lease = info[0].As<Napi::String>().Utf8Value();
  std::lock_guard<std::mutex> hold(g_cancel_lock);
  auto found = g_cancel_fds.find(lease);
  if (found == g_cancel_fds.end()) return Napi::Boolean::New(env, false);
  uint64_t one = 1;
  ssize_t w = write(found->second, &one, sizeof one);
  // EAGAIN: the counter is already non-zero, i.e. already cancelled.
  return Napi::Boolean::New(env, w == (ssize_t)sizeof one || errno == EAGAIN);
}

Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
  return Napi::Number::New(info.Env(), abi < 0 ? 0 : static_cast<double>(abi));
}

// renameat2(dirfd, a, dirfd, b, RENAME_EXCHANGE): both names swapped in one
// step inside the directory the caller holds, so a crash leaves one tree or
// the other under each name, never neither (agent-guest/snapshots restore).
// Names must be single components: a '/' would let the lookup leave the
// held directory. Returns 0 or the errno.
Napi::Value RenameExchangeAt(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 3 || !info[0].IsNumber() || !info[1].IsString() || !info[2].IsString()) {
    Napi::TypeError::New(env, "renameExchangeAt(dirFd, a, b)").ThrowAsJavaScriptException();
    return env.Null();
  }
  int dirfd = info[0].As<Napi::Number>().Int32Value();
  std::string a = info[1].As<Napi::String>().Utf8Value();
  std::string b = info[2].As<Napi::String>().Utf8Value();
  for (const std::string* n : {&a, &b}) {
    if (n->empty() || *n == "." || *n == ".." || n->find('/') != std::string::npos || n->find('\0') != std::string::npos) return Napi::Number::New(env, EINVAL);
  }
  long r = syscall(SYS_renameat2, dirfd, a.c_str(), dirfd, b.c_str(), RENAME_EXCHANGE);
  return Napi::Number::New(env, r == 0 ? 0 : errno);
}

Napi::Value SeccompAvailable(const Napi::CallbackInfo& info) {
  // PR_GET_SECCOMP answers EINVAL on kernels built without seccomp.
  return Napi::Boolean::New(info.Env(), prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0);
}

// Synchronous: meant for start-up (bounded: ~3 s per lease that still holds
// processes, otherwise milliseconds).
Napi::Value SweepStaleLeases(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* rep = new lh_sweep_report();
  lh_cgroup_sweep(rep);
  Napi::Object o = Napi::Object::New(env);
  o.Set("removed", Napi::Number::New(env, rep->removed));
  o.Set("killed", Napi::Number::New(env, rep->killed));
  o.Set("liveOwn", Napi::Number::New(env, rep->live_own));
  o.Set("liveOther", Napi::Number::New(env, rep->live_other));
  o.Set("foreign", Napi::Number::New(env, rep->foreign));
  Napi::Array failures = Napi::Array::New(env, rep->n_failures);
  for (unsigned i = 0; i < rep->n_failures; i++) {
    Napi::Object f = Napi::Object::New(env);
    f.Set("path", Napi::String::New(env, rep->failures[i].path));
    f.Set("reason", Napi::String::New(env, rep->failures[i].reason));
    failures.Set(i, f);
  }
  o.Set("failures", failures);
  delete rep;
  return o;
}

// Where memory/pids/cpu would be enforced on this host: "v1", "v2", or ""
// (the reason in `why`): the same decision lh_cgroup_create makes.
Napi::Value CgroupMode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  char why[512] = "";
  int m = lh_cgroup_mode(why, sizeof why);
  Napi::Object o = Napi::Object::New(env);
  o.Set("mode", Napi::String::New(env, m == LH_CG_V2 ? "v2" : m == LH_CG_V1 ? "v1" : ""));
  o.Set("why", Napi::String::New(env, why));
  return o;
}

// Loads and self-tests the lease programs once per process (the first call
// takes the time: ~0.5 s here), then answers from memory. Synchronous: meant
// for start-up and health. Optional argument: the strongest tier allowed
// ("A", "B", "C"), honoured only by the first call.
Napi::Value BpfStatus(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  char max = 0;
  if (info.Length() > 0 && info[0].IsString()) {
    std::string m = info[0].As<Napi::String>().Utf8Value();
    if (m == "A" || m == "B" || m == "C") max = m[0];
  }
  lh_bpf_status st{};
  lh_bpf_init(max, &st);
  Napi::Object o = Napi::Object::New(env);
  o.Set("tier", Napi::String::New(env, std::string(1, st.tier)));
  o.Set("objectSha256", Napi::String::New(env, st.object_sha256));
  o.Set("detail", Napi::String::New(env, st.detail));
  return o;
}

// A BPF lease on a cgroup the caller manages (tests, benchmarks): the same
// lh_bpf_lease_add a launch makes. Returns a handle for bpfLeaseWithdraw,
// which the caller may call only once the cgroup holds no process.
Napi::Value BpfLeaseAdd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object in = info[0].As<Napi::Object>();
  std::string path = in.Get("cgroupPath").As<Napi::String>().Utf8Value();
  auto ex = in.Get("exec").As<Napi::Buffer<char>>();
  auto eg = in.Get("egress").As<Napi::Buffer<char>>();
  if (ex.Length() % sizeof(lh_bpf_file) || eg.Length() % sizeof(lh_bpf_rule)) {
    Napi::TypeError::New(env, "exec / egress are not whole records").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  lh_bpf_lease_spec spec{};
  spec.cgroup_id = GetU64(in, "cgroupId");
  spec.cgroup_path = path.c_str();
  spec.exec_enforced = in.Get("execEnforced").ToBoolean().Value() ? 1 : 0;
  spec.exec = reinterpret_cast<const lh_bpf_file*>(ex.Data());
  spec.n_exec = ex.Length() / sizeof(lh_bpf_file);
  spec.net_enforced = in.Get("netEnforced").ToBoolean().Value() ? 1 : 0;
  spec.egress = reinterpret_cast<const lh_bpf_rule*>(eg.Data());
  spec.n_egress = eg.Length() / sizeof(lh_bpf_rule);
  lh_bpf_lease* lease = nullptr;
  char err[512] = "";
  int rc = lh_bpf_lease_add(&spec, &lease, err, sizeof err);
  if (rc < 0) {
    Napi::Error e = Napi::Error::New(env, std::string("bpf lease: ") + err);
    e.Set("errno", Napi::Number::New(env, -rc));
    e.ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::External<lh_bpf_lease>::New(env, lease);
}

Napi::Value BpfLeaseWithdraw(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* lease = info[0].As<Napi::External<lh_bpf_lease>>().Data();
  std::vector<lh_bpf_denial> ds(LH_LAUNCH_MAX_DENIALS);
  size_t n = 0;
  uint64_t dropped = 0;
  lh_bpf_lease_withdraw(lease, ds.data(), ds.size(), &n, &dropped);
  Napi::Object o = Napi::Object::New(env);
  o.Set("denials", DenialsToJs(env, ds.data(), n));
  o.Set("dropped", U64(env, dropped));
  return o;
}

// Run counts and times of the enforcing programs (bpf.bench.ts; they grow
// only while kernel.bpf_stats_enabled is 1).
Napi::Value BpfProgramStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  lh_bpf_prog_stat st[16];
  int n = lh_bpf_prog_stats(st, 16);
  Napi::Array a = Napi::Array::New(env, n);
  for (int i = 0; i < n; i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", Napi::String::New(env, st[i].name));
    o.Set("runCnt", U64(env, st[i].run_cnt));
    o.Set("runTimeNs", U64(env, st[i].run_time_ns));
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

// Layout of the records shared with native/bpf-abi.ts, as this compiler laid them out.
Napi::Value BpfAbi(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("rule", Napi::Number::New(env, sizeof(lh_bpf_rule)));
  o.Set("file", Napi::Number::New(env, sizeof(lh_bpf_file)));
  return o;
}

Napi::Value LeaseOwnerPrefix(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), lh_cgroup_owner_prefix());
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  const char* fi = std::getenv(kFaultInjectionEnv);
  g_fault_injection = fi != nullptr && std::strcmp(fi, "1") == 0;
  exports.Set("launch", Napi::Function::New(env, Launch));
  exports.Set("cancelLaunch", Napi::Function::New(env, CancelLaunch));
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi));
  exports.Set("renameExchangeAt", Napi::Function::New(env, RenameExchangeAt));
  exports.Set("seccompAvailable", Napi::Function::New(env, SeccompAvailable));
  exports.Set("sweepStaleLeases", Napi::Function::New(env, SweepStaleLeases));
  exports.Set("leaseOwnerPrefix", Napi::Function::New(env, LeaseOwnerPrefix));
  exports.Set("cgroupMode", Napi::Function::New(env, CgroupMode));
  exports.Set("bpfStatus", Napi::Function::New(env, BpfStatus));
  exports.Set("bpfAbi", Napi::Function::New(env, BpfAbi));
  exports.Set("bpfProgramStats", Napi::Function::New(env, BpfProgramStats));
  exports.Set("bpfLeaseAdd", Napi::Function::New(env, BpfLeaseAdd));
  exports.Set("bpfLeaseWithdraw", Napi::Function::New(env, BpfLeaseWithdraw));
  return exports;
}

}  // namespace

NODE_API_MODULE(leasehold_native, Init)
