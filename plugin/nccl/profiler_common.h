// NCCL's profiler plugin ABI, the part every API version shares: the result
// codes, the logger NCCL hands to init, and the event states (whose values
// were never renumbered). The per-version declarations are profiler_v1.h ..
// profiler_v7.h beside this file; each includes the one before it, so
// profiler_abi.h (the newest) declares every version.
//
// Our own declarations, written from NCCL's headers' facts (docs/design/
// nccl.md §Profiler ABI), not copied. Field and type names keep NCCL's
// spelling (seqNumber, parentObj, ...) so they can be compared against
// NCCL's headers; every size, alignment and offset is pinned in
// abi_pins.inc (checked by abi_pins.cc at build time and re-derived by the
// nccl_abi_probe test). Private to the plugin, the emulator and the tests:
// not installed.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_COMMON_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_COMMON_H_

#include <stddef.h>
#include <stdint.h>

namespace flightrec {
namespace nccl_abi {

// ncclResult_t: a 4-byte enum.
enum Result : int32_t {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

// ncclDebugLogger_t. NCCL's first parameter is the ncclDebugLogLevel enum,
// which is passed exactly like an int.
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

// ncclDebugLogLevel values.
constexpr int kLogNone = 0;
constexpr int kLogVersion = 1;
constexpr int kLogWarn = 2;
constexpr int kLogInfo = 3;
constexpr int kLogAbort = 4;
constexpr int kLogTrace = 5;

// ncclProfilerEventState_t (every version; values were never renumbered).
enum EventState : int32_t {
  kProxyOpSendPosted = 0,  // states 0-7: emitted by NCCL <= 2.26 only
  kProxyOpSendRemFifoWait = 1,
  kProxyOpSendTransmitted = 2,
  kProxyOpSendDone = 3,
  kProxyOpRecvPosted = 4,
  kProxyOpRecvReceived = 5,
  kProxyOpRecvTransmitted = 6,
  kProxyOpRecvDone = 7,
  kProxyStepSendGPUWait = 8,
  kProxyStepSendWait = 9,  // args carry transSize
  kProxyStepRecvWait = 10,
  kProxyStepRecvFlushWait = 11,  // args carry transSize
  kProxyStepRecvGPUWait = 12,
  kProxyCtrlIdle = 13,
  kProxyCtrlActive = 14,
  kProxyCtrlSleep = 15,
  kProxyCtrlWakeup = 16,
  kProxyCtrlAppend = 17,
  kProxyCtrlAppendEnd = 18,
  kProxyOpInProgressV4 = 19,      // v4
  kProxyStepSendPeerWaitV4 = 20,  // v4
  kNetPluginUpdate = 21,          // v4
  kKernelChStop = 22,             // v4: args.kernelCh.pTimer = GPU stop time
  kGroupStartApiStop = 23,        // v5: args may be NULL or uninitialized
  kGroupEndApiStart = 24,         // v5: args may be NULL or uninitialized
  kCeCollStart = 25,              // v6: declared, never recorded by NCCL core
  kCeCollComplete = 26,
  kCeSyncStart = 27,
  kCeSyncComplete = 28,
  kCeBatchStart = 29,
  kCeBatchComplete = 30,
  kKernelPhaseStop = 31,  // v7
};

// ncclProfiler_vN_t: the table a plugin exports as the data object
// `ncclProfiler_vN`. Six members, 48 bytes, in every version; only the init
// arguments, the descriptor and the state args differ.
template <typename InitFn, typename Descr, typename StateArgs>
struct ProfilerTable {
  const char* name;
  InitFn init;
  Result (*startEvent)(void* context, void** eHandle, Descr* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_COMMON_H_
