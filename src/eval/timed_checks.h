// Which timed calls have their outputs judged. Every call of a timing block runs the same
// protocol and the candidate is never told which ones are looked at; the launcher draws a
// fresh subset per block (and per size), so a kernel that counts its calls and skips work in
// the ones it guesses unchecked is caught with a probability the numbers below state.
#pragma once
#include <random>
#include <vector>

namespace mgk::eval {

// `count` distinct call indices in [0, calls), each equally likely, sorted; all of them
// when count >= calls, none when calls is 0.
std::vector<int> draw_checked_calls(int calls, int count, std::mt19937_64& rng);

// The chance that `count` checks drawn as above from a block of `calls` calls miss all of
// `bad` wrong ones: C(calls - bad, count) / C(calls, count).
double miss_probability(int calls, int bad, int count);

}  // namespace mgk::eval
