// The JSON that bankmap and fragmap print for one shared-memory access: the
// bank model's verdict (ladder::bank::Analysis) and its phases, one object
// each. The tools add what they know of the lanes (addresses, elements).
#pragma once

#include <ladder/bank_model.hpp>
#include <ladder/json.hpp>

namespace tools {

/// Each phase of the access: its lanes, the words each bank is asked for,
/// and the wavefronts it takes.
inline ladder::Json phases_json(const ladder::bank::Analysis& a) {
  ladder::Json phases = ladder::Json::array();
  for (int p = 0; p < a.phase_count; ++p) {
    const ladder::bank::Phase& phase = a.phases[p];
    ladder::Json words = ladder::Json::array();
    for (int count : phase.words_per_bank) words.push(ladder::Json::number(count));
    ladder::Json entry = ladder::Json::object();
    entry.set("first_lane", phase.first_lane);
    entry.set("lanes", phase.lanes);
    entry.set("active_lanes", phase.active_lanes);
    entry.set("words_per_bank", std::move(words));
    entry.set("wavefronts", phase.wavefronts);
    phases.push(std::move(entry));
  }
  return phases;
}

/// Sets the access's totals on `out`: access width, lanes per phase,
/// wavefronts against the ideal, and the conflict degree.
inline void set_totals(ladder::Json& out, const ladder::bank::Analysis& a) {
  out.set("width_bytes", a.width_bytes);
  out.set("group_size", a.group_size);
  out.set("wavefronts", a.wavefronts);
  out.set("ideal_wavefronts", a.ideal_wavefronts);
  out.set("conflict_degree", a.conflict_degree());
}

}  // namespace tools
