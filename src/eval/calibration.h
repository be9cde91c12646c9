// The machine's calibration as the store keeps it (`mgk calibrate`): the key a calibration
// is filed under, and the peaks of the latest one, which the roofline fractions divide by.
#pragma once
#include <optional>

#include "eval/machine.h"
#include "store/store.h"

namespace mgk::eval {

store::MachineKey machine_key(const MachineInfo& m);

// Peaks of this machine's latest calibration; none without a GPU or a calibration.
std::optional<Peaks> calibrated_peaks(store::Store& store, const MachineInfo& m);

}  // namespace mgk::eval
