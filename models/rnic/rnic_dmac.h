// rnic_dmac: the card's bus-master DMA (DESIGN.md §3.3, §4), as one model both faces use. A read
// is split into pieces at MRRS and at 4 KiB boundaries, each piece takes a tag (at most `tags`
// in flight) and goes as one MRd; its completions (CplD, split by the completer at RCB, pieces of
// different tags interleaved in any order) are placed at their offsets, and the read finishes
// when its last piece has (a failed piece fails the read, the first failure's status kept). A
// write is split at MPS and at 4 KiB into MWrs.
//
// Faces: the PCIe I/F's DMA service (models/pcie/pcie_if.h: dma_read / dma_write, the burst API
// the engines call, with its timing) and the pin face (rnic_dmac_ports.h). Queue depths: pieces
// waiting for a tag are not bounded here (the faces bound them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace rnic {

enum class DmacStatus : uint8_t { kOk = 0, kUnsupported = 1, kAbort = 2, kTimeout = 3 };
const char* to_string(DmacStatus s);

struct DmacSpan {
  uint64_t addr;
  uint32_t len;
};

// The pieces of a read (MRRS, 4 KiB) and the MWrs of a write (MPS, 4 KiB); a 0-byte read is one
// 0-byte piece (it takes a tag, sends nothing and completes at once), a 0-byte write nothing.
std::vector<DmacSpan> dmac_split(uint64_t addr, uint64_t len, uint64_t max_payload, bool read);

class DmacLogic {
 public:
  struct Mrd {
    uint64_t addr;
    uint32_t len;
    uint16_t tag;
  };
  struct Finished {
    uint64_t id;
    DmacStatus status;
    std::vector<uint8_t> data;  // empty unless kOk
  };

  DmacLogic(uint64_t mrrs, int tags) : mrrs_(mrrs), tags_(tags) {}

  // A read: its pieces join the tag queue. Returns its id (issue order from 0).
  uint64_t read(uint64_t addr, uint32_t len);
  // Gives tags to waiting pieces, in order, while tags are free: the MRds to send now, issued
  // at time `now` (the face's unit). 0-byte pieces are completed here and send nothing.
  std::vector<Mrd> issue(uint64_t now = 0);
  // A completion for `tag`: status, the byte count it carries (bytes left in the piece, its own
  // included) and its data. Unknown tags are ignored (returns false).
  bool completion(uint16_t tag, DmacStatus st, uint32_t byte_count, const uint8_t* data,
                  uint32_t len);
  // Fails the piece holding `tag` (completion timeout).
  void expire(uint16_t tag);
  // Fails every piece issued at or before `t` (completion timeout); returns their tags.
  std::vector<uint16_t> expire_issued_by(uint64_t t);
  // The issue time of the oldest outstanding piece; false when none is outstanding.
  bool oldest_issue(uint64_t* t);
  // Reads that have finished since the last call, in the order they finished.
  std::vector<Finished> take_finished();

  int tags_in_use() const { return int(out_.size()); }
  size_t waiting() const { return waiting_.size(); }
  bool outstanding(uint16_t tag) const { return out_.count(tag) != 0; }

 private:
  struct Read {
    uint64_t addr;
    uint32_t len;
    uint32_t pieces_left;
    DmacStatus status = DmacStatus::kOk;
    std::vector<uint8_t> data;
  };
  struct Piece {
    uint64_t read;
    uint64_t addr;
    uint32_t len;
    uint64_t issued = 0;
  };
  void complete(uint16_t tag, DmacStatus st);

  uint64_t mrrs_;
  int tags_;
  uint64_t next_id_ = 0;
  uint16_t next_tag_ = 0;
  std::map<uint64_t, Read> reads_;
  std::deque<Piece> waiting_;
  std::map<uint16_t, Piece> out_;
  // (issue time, tag) in issue order; entries of pieces no longer outstanding are skipped.
  std::deque<std::pair<uint64_t, uint16_t>> order_;
  std::vector<Finished> finished_;
};

}  // namespace rnic
