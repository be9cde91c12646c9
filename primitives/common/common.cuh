// Aggregator: the basics every other folder builds on.
#pragma once
#include "base.cuh"
