// Everything an event can reach through a handle, and how long it lives.
//
// THE LIFETIME RULE. An event of NCCL's proxy thread (KernelCh, ProxyOp,
// ProxyStep, late stops) resolves its handle with rec::LookupComm and then
// writes through the CommRecorder it got, with no lock and no reference
// count (the hot path may not pay an atomic read-modify-write). Such a thread
// can pass the lookup an instant before the comm's finalize, be descheduled,
// and resume after the finalize, after the last finalize's Shutdown, or after
// a new communicator took the region. So:
//
//   * A RingSlab (one ring mapping and the CommRecorder objects that point
//     into it) is never unmapped or freed while the library is loaded. When
//     the process recorder shuts down, its slab is PARKED: the mapping stays
//     (the exited ring file, still mapped), the objects stay.
//   * A CommRecorder object is never freed while loaded: region r of a slab
//     always uses the same object; OpenComm re-arms it (new generation,
//     finalized_ = 0) for the next communicator of that region. Its
//     header_/desc_/records_/mask_ never change, so a late writer still
//     writes inside region r of that mapping. A p2p counter array outgrown by
//     a later communicator is retired to the slab, not freed.
//   * The next process recorder's Start takes a parked slab of the same
//     layout and maps its new ring file over the old range (MAP_FIXED: the
//     range is never unmapped, a late writer writes into one file or the
//     other). Slabs of another layout stay parked. Memory is bounded: one
//     slab per distinct layout ever used, one object per region.
//   * Unload (the library's destructor, at dlclose or exit) unmaps and frees
//     every parked slab, and only when no communicator is open: NCCL
//     finalizes every comm (and joins the proxy threads behind it) before it
//     dlcloses a profiler, and a thread still inside our code at dlclose
//     would run unmapped code anyway. At exit with comms still open nothing
//     is freed (writers may still run; the memory stays reachable).
//
// What a late writer can do: its stores land in the (exited, or recycled)
// ring of the same region. Its slot sequence is checked against the slot's
// commit word first, so it can only touch a record of the new communicator
// that has that very slot sequence; that needs the thread to sleep across a
// finalize, an init and as many ops as its sequence number. Memory safety
// does not depend on that.
//
// All functions here are slow path and run under the recorder mutex
// (recorder.cc).
#ifndef FLIGHTREC_RECORDER_RING_SLAB_H_
#define FLIGHTREC_RECORDER_RING_SLAB_H_

#include <stdint.h>

#include "recorder/comm_recorder.h"
#include "recorder/ring_file.h"

namespace flightrec {
namespace rec {

struct RetiredArray;  // a p2p counter array kept until unload

struct RingSlab {
  RingMapping ring;                  // base == nullptr until the first CreateRingFile
  CommRecorder** comms = nullptr;    // [ring.layout.max_regions], objects made on first use
  uint32_t* p2p_capacity = nullptr;  // [max_regions]: peers comms[r]'s array holds
  RetiredArray* retired = nullptr;
  RingSlab* next = nullptr;  // parked list
};

// A parked slab whose layout equals `l` (removed from the parked list), or
// nullptr when there is none.
RingSlab* TakeParkedSlab(const RingLayout& l);
// A new, unmapped slab for `max_regions` regions; nullptr when out of memory.
RingSlab* NewSlab(uint32_t max_regions);
// Frees a slab that was never mapped (Start failed before CreateRingFile
// succeeded on a new slab).
void FreeUnmappedSlab(RingSlab* s);
// Keeps `s` (mapping and objects) until unload.
void ParkSlab(RingSlab* s);
// The object of region r, made on first use, with a p2p counter array of at
// least `peers` peers (zeroed). nullptr when out of memory.
CommRecorder* SlabComm(RingSlab* s, uint32_t r, uint32_t peers);
// Library unload with no communicator open: unmaps and frees every parked
// slab.
void FreeParkedSlabs();

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_RING_SLAB_H_
