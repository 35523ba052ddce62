// Facts about the host process written into the FileHeader at init: host
// name, NCCL version (when the host exports ncclGetVersion) and the GPU this
// thread's CUDA context uses (only when libcuda is already loaded; there may
// be no GPU at all, and then cuda_device stays -1).
#ifndef FLIGHTREC_RECORDER_HOST_INFO_H_
#define FLIGHTREC_RECORDER_HOST_INFO_H_

#include <stddef.h>

#include "flightrec/job_identity.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace rec {

// The host name sanitized for use in file names (flightrec/job_identity.h).
using format::HostName;

// Fills nccl_version, cuda_device, gpu_uuid and gpu_pci_bus_id. Never fails:
// anything unavailable is left "" / -1.
void FillHostFacts(format::FileHeader* header);

// "2.28.9" from NCCL's version code (major*10000+minor*100+patch; codes
// below 10000 are the pre-2.9 major*1000+minor*100+patch form).
void FormatNcclVersion(int code, char* out, size_t out_len);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_HOST_INFO_H_
