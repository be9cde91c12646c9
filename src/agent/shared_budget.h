// A budget several attempts draw on at once (a bench run's --max-cost). Each model call holds
// its worst case (every output token it may write, and the conversation it sends) before it
// is made, so calls in flight together cannot cross the budget, and settles with what it
// cost when it returns.
#pragma once

namespace mgk::agent {

class SharedBudget {
 public:
  virtual ~SharedBudget() = default;
  // Holds `worst_usd` for a call about to be made. False, holding nothing, when it cannot
  // fit beside what was spent and what the calls in flight hold: the budget is spent and
  // the attempt ends before the call (resumable).
  virtual bool hold(double worst_usd) = 0;
  // The call is over (answered, failed or cut short): `held_usd` is released and `cost_usd`
  // spent.
  virtual void settle(double held_usd, double cost_usd) = 0;
};

}  // namespace mgk::agent
