#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/error.h"
#include "problems/catalog.h"
#include "problems/resolve.h"
#include "problems/spec.h"

namespace mgk::problems {
namespace {

nlohmann::json minimal() {
  return nlohmann::json::parse(R"json({
    "title": "t", "dtypes": ["bf16", "f32"],
    "sizes": [{"name": "small", "dims": {"N": "1024", "C": "floor(N / W)"}}, {"name": "big", "dims": {"N": 4096}}],
    "inputs": [{"name": "x", "dtype": "T", "shape": ["R == 0 ? W * C : 0"], "symmetric": true,
                "init": {"dist": "uniform", "low": -2, "high": 2}}],
    "outputs": [{"name": "y", "dtype": "T", "shape": ["C"], "tolerance": {"kind": "rounding", "factor": "W + 1"}},
                {"name": "idx", "dtype": "i64", "shape": ["2", "C"]}],
    "cost": {"flops": "(W - 1) * C", "link_bytes": "R == 0 ? (W - 1) * C * ELT : C * ELT"}
  })json");
}

TEST(Spec, ASizeThatOverflowsIsAnErrorNotANegativeSize) {
  nlohmann::json j = minimal();
  j["sizes"][1]["dims"] = {{"N", 4e9}, {"C", "floor(N / W)"}};
  j["outputs"][1]["shape"] = {"N", "N", "N"};
  Spec s = parse_spec(j, "cat/p", "/tmp/p");
  try {
    resolve(s, "big", "", 2, 0);
    FAIL() << "4e9 x 4e9 x 4e9 i64 elements should not resolve";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cat/p tensor idx has shape [4000000000,4000000000,4000000000]: more bytes than 64 "
              "bits can count; check the size preset's dims");
  }
  j["outputs"][1]["shape"] = {"N", "N"};  // 1.6e19 elements: fits no int64 either
  EXPECT_THROW(resolve(parse_spec(j, "cat/p", "/tmp/p"), "big", "", 2, 0), UsageError);
  j["outputs"][1]["shape"] = {"N", "200000000"};  // 8e17 elements, 6.4e18 bytes: fits
  EXPECT_EQ(resolve(parse_spec(j, "cat/p", "/tmp/p"), "big", "", 2, 0).outputs[1].numel,
            800000000000000000LL);
}

TEST(Spec, ParsesEveryField) {
  Spec s = parse_spec(minimal(), "cat/p", "/tmp/p");
  EXPECT_EQ(s.category, "cat");
  EXPECT_EQ(s.dtypes, (std::vector<std::string>{"bf16", "f32"}));
  EXPECT_EQ(s.size_names, (std::vector<std::string>{"small", "big"}));
  EXPECT_EQ(s.default_sizes, s.size_names);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].init.dist, "uniform");
  EXPECT_DOUBLE_EQ(s.inputs[0].init.a, -2);
  EXPECT_TRUE(s.inputs[0].symmetric);
  EXPECT_EQ(s.outputs[0].tolerance.kind, ToleranceKind::kRounding);
  EXPECT_EQ(s.outputs[1].tolerance.kind, ToleranceKind::kExact);  // the default
}

TEST(Spec, ZipfIdsParseWithTheirExponent) {
  nlohmann::json j = minimal();
  j["inputs"].push_back({{"name", "ids"}, {"dtype", "i64"}, {"shape", {"C"}},
                         {"init", {{"dist", "zipf"}, {"low", 0}, {"high", "N"}, {"exponent", 1.1}}}});
  const InputInit& z = parse_spec(j, "cat/p", "/tmp/p").inputs[1].init;
  EXPECT_EQ(z.dist, "zipf");
  EXPECT_EQ(z.b_expr, "N");
  EXPECT_DOUBLE_EQ(z.exponent, 1.1);
}

TEST(Spec, ResolvesShapesPerRankAndCost) {
  Spec s = parse_spec(minimal(), "cat/p", "/tmp/p");
  Resolved r0 = resolve(s, "small", "", 4, 0);
  Resolved r1 = resolve(s, "small", "f32", 4, 1);
  EXPECT_EQ(r0.dtype, MGK_BF16);  // first dtype is the default
  EXPECT_EQ(r1.dtype, MGK_F32);
  EXPECT_EQ(r0.inputs[0].shape, (std::vector<long long>{1024}));
  EXPECT_EQ(r1.inputs[0].numel, 0);
  // Symmetric buffers are as large as the largest rank's everywhere.
  EXPECT_EQ(r1.inputs[0].max_bytes_over_ranks, 1024 * 4);
  EXPECT_EQ(r0.outputs[1].shape, (std::vector<long long>{2, 256}));
  EXPECT_EQ(r0.outputs[1].dtype, MGK_I64);
  EXPECT_DOUBLE_EQ(r0.cost.flops, 3 * 256);
  EXPECT_DOUBLE_EQ(r0.cost.link_bytes, 3 * 256 * 2);
  EXPECT_DOUBLE_EQ(r1.cost.link_bytes, 256 * 4);
  auto m = max_cost_over_ranks(s, "small", "bf16", 4);
  EXPECT_DOUBLE_EQ(m.link_bytes, 3 * 256 * 2);
}

TEST(Spec, ErrorsNameFileFieldAndFix) {
  auto expect_error = [](nlohmann::json j, const std::string& part) {
    try {
      parse_spec(j, "cat/p", "/tmp/p");
      ADD_FAILURE() << "no error for " << part;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("/tmp/p/problem.json"), std::string::npos) << e.what();
    }
  };
  auto j = minimal();
  j["sizes"] = nlohmann::json::array();
  expect_error(j, "sizes");
  j = minimal();
  j["inputs"][0]["dtype"] = "bf17";
  expect_error(j, "unknown dtype 'bf17'");
  j = minimal();
  j["outputs"][0]["tolerance"]["kind"] = "close-enough";
  expect_error(j, "valid: exact, rounding, allclose");
  j = minimal();
  j["inputs"][0]["shape"][0] = "N +";
  expect_error(j, "inputs.x.shape[0]");
  j = minimal();
  j["default_sizes"] = {"huge"};
  expect_error(j, "unknown preset 'huge'");
  j = minimal();
  j["sizes"][0]["dims"]["W"] = 3;
  expect_error(j, "reserved");
}

// An input's "init": parameters as numbers or as expressions of the dims and W, and special
// rows (every zero_every-th row zero, every tiny_every-th scaled by tiny) of a length that
// defaults to the shape's last dim.
TEST(Spec, InitParametersMayBeExpressionsAndRowsMayBeSpecial) {
  nlohmann::json j = minimal();
  j["inputs"].push_back({{"name", "w"}, {"dtype", "bf16"}, {"shape", {"N", "C"}},
                         {"init", {{"dist", "normal"}, {"mean", 0.5}, {"std", "N ** -0.5"},
                                   {"rows", {{"zero_every", 16}, {"tiny_every", 8}, {"tiny", 0.0009765625},
                                             {"massive_every", 32}, {"massive", 100}}}}}});
  j["inputs"].push_back({{"name", "flat"}, {"dtype", "bf16"}, {"shape", {"W * N"}},
                         {"init", {{"dist", "uniform"}, {"low", "-W"}, {"high", 3}, {"rows", {{"length", "C"}, {"zero_every", 4}}}}}});
  const Spec s = parse_spec(j, "cat/p", "/tmp/p");
  const InputInit& w = s.inputs[1].init;
  EXPECT_DOUBLE_EQ(w.a, 0.5);
  EXPECT_TRUE(w.a_expr.empty());
  EXPECT_EQ(w.b_expr, "N ** -0.5");
  EXPECT_EQ(w.row_length, "C");  // the last dim
  EXPECT_EQ(w.zero_every, 16);
  EXPECT_EQ(w.tiny_every, 8);
  EXPECT_DOUBLE_EQ(w.tiny, 0x1p-10);
  EXPECT_EQ(w.massive_every, 32);
  EXPECT_DOUBLE_EQ(w.massive, 100);
  const InputInit& f = s.inputs[2].init;
  EXPECT_EQ(f.a_expr, "-W");
  EXPECT_DOUBLE_EQ(f.b, 3);
  EXPECT_EQ(f.row_length, "C");
  EXPECT_EQ(f.zero_every, 4);
  EXPECT_EQ(f.tiny_every, 0);
  EXPECT_EQ(f.massive_every, 0);
  // No "rows": none.
  EXPECT_EQ(s.inputs[0].init.zero_every, 0);
  EXPECT_TRUE(s.inputs[0].init.row_length.empty());
}

TEST(Spec, InitErrorsNameTheField) {
  auto expect_error = [](const nlohmann::json& init, const std::string& part, nlohmann::json shape = {"N", "C"}) {
    nlohmann::json j = minimal();
    j["inputs"].push_back({{"name", "w"}, {"dtype", "bf16"}, {"shape", shape}, {"init", init}});
    try {
      parse_spec(j, "cat/p", "/tmp/p");
      ADD_FAILURE() << "no error for " << init.dump();
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  using J = nlohmann::json;
  expect_error(J{{"dist", "normal"}, {"std", "R + 1"}}, "inputs.w.init.std': 'R' is not allowed");
  expect_error(J{{"dist", "normal"}, {"std", "N +"}}, "inputs.w.init.std'");
  expect_error(J{{"dist", "normal"}, {"std", -1}}, "must not be negative");
  expect_error(J{{"dist", "normal"}, {"std", true}}, "expected a number or an expression");
  expect_error(J{{"dist", "normal"}, {"low", 0}}, "inputs.w.init.low': unknown key for 'normal'");
  expect_error(J{{"dist", "uniform"}, {"low", 0}, {"high", 1}, {"std", 1}}, "unknown key for 'uniform'");
  expect_error(J{{"dist", "uniform"}, {"low", 1}, {"high", 1}}, "'high' must exceed 'low'");
  expect_error(J{{"dist", "randint"}, {"low", 0}, {"high", 9}, {"rows", {{"zero_every", 4}}}}, "not for 'randint'");
  expect_error(J{{"dist", "zipf"}, {"low", 0}, {"high", 9}}, "inputs.w.init.exponent': 'zipf' needs a positive");
  expect_error(J{{"dist", "zipf"}, {"low", 0}, {"high", 9}, {"exponent", 0}}, "'zipf' needs a positive 'exponent'");
  expect_error(J{{"dist", "zipf"}, {"low", 0}, {"high", 9}, {"exponent", 1.1}, {"std", 1}},
               "unknown key for 'zipf' (valid: dist, low, high, exponent, rows)");
  expect_error(J{{"dist", "uniform"}, {"low", 0}, {"high", 9}, {"exponent", 1.1}}, "unknown key for 'uniform'");
  expect_error(J{{"dist", "zipf"}, {"low", 0}, {"high", 9}, {"exponent", 1.1}, {"rows", {{"zero_every", 4}}}},
               "not for 'zipf'");
  expect_error(J{{"dist", "poisson"}}, "(valid: normal, uniform, randint, zipf)");
  expect_error(J{{"rows", {{"zero_every", 1}}}}, "inputs.w.init.rows.zero_every': expected an integer of at least 2");
  expect_error(J{{"rows", {{"zero_every", 2.5}}}}, "rows.zero_every'");
  expect_error(J{{"rows", {{"tiny_every", 4}}}}, "rows.tiny'");
  expect_error(J{{"rows", {{"zero_every", 4}, {"tiny", 0.5}}}}, "rows.tiny'");
  expect_error(J{{"rows", {{"tiny_every", 4}, {"tiny", 1.5}}}}, "expected a number in (0, 1)");
  expect_error(J{{"rows", J::object()}}, "needs 'zero_every', 'tiny_every' or 'massive_every'");
  expect_error(J{{"rows", {{"massive_every", 32}}}}, "rows.massive'");
  expect_error(J{{"rows", {{"massive_every", 32}, {"massive", 0.5}}}}, "rows.massive': expected a number above 1");
  expect_error(J{{"rows", {{"zero_every", 4}, {"massive", 100}}}}, "goes with 'massive_every'");
  expect_error(J{{"rows", {{"zero_every", 4}, {"every", 2}}}}, "rows.every': unknown key");
  expect_error(J{{"rows", {{"zero_every", 4}, {"length", "R * C"}}}}, "rows.length': 'R' is not allowed");
  expect_error(J{{"rows", {{"zero_every", 4}}}}, "a scalar has no rows", J::array());
  expect_error(J{{"rows", 4}}, "inputs.w.init.rows'");
}

// An output in place of an input is that input's buffer: it takes the input's dtype, shape
// and placement, and the plan names the input by index for the harness.
TEST(Spec, InPlaceOutputInheritsItsInputAndResolvesToItsIndex) {
  nlohmann::json j = minimal();
  j["inputs"].push_back({{"name", "g"}, {"dtype", "bf16"}, {"shape", {"C", "3"}}});
  j["outputs"].push_back({{"name", "g_clipped"}, {"in_place_of", "g"}, {"tolerance", {{"kind", "exact"}}}});
  Spec s = parse_spec(j, "cat/p", "/tmp/p");
  ASSERT_EQ(s.outputs.size(), 3u);
  EXPECT_EQ(s.outputs[2].in_place_of, "g");
  EXPECT_EQ(s.outputs[2].dtype, "bf16");
  EXPECT_EQ(s.outputs[2].shape, (std::vector<std::string>{"C", "3"}));
  Resolved r = resolve(s, "small", "f32", 4, 1);
  EXPECT_EQ(r.outputs[2].in_place_of, 1);
  EXPECT_EQ(r.outputs[2].shape, (std::vector<long long>{256, 3}));
  EXPECT_EQ(r.outputs[2].dtype, MGK_BF16);
  EXPECT_EQ(r.outputs[0].in_place_of, -1);
}

TEST(Spec, InPlaceOutputErrorsNameTheField) {
  auto expect_error = [](const nlohmann::json& extra_out, const std::string& part, bool on_input = false) {
    nlohmann::json j = minimal();
    j["inputs"].push_back({{"name", "g"}, {"dtype", "bf16"}, {"shape", {"C"}}});
    if (on_input)
      j["inputs"][0]["in_place_of"] = "g";
    else
      j["outputs"].push_back(extra_out);
    try {
      parse_spec(j, "cat/p", "/tmp/p");
      FAIL() << "expected an error containing: " << part;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({{"name", "o"}, {"in_place_of", "nope"}}, "outputs.o.in_place_of': no input named 'nope'");
  expect_error({{"name", "o"}, {"in_place_of", "g"}, {"dtype", "bf16"}}, "outputs.o.dtype': an in-place output has");
  expect_error({{"name", "o"}, {"in_place_of", "g"}, {"shape", {"C"}}}, "outputs.o.shape'");
  expect_error({{"name", "o"}, {"in_place_of", "g"}, {"symmetric", true}}, "outputs.o.symmetric'");
  expect_error({}, "only outputs can be in place", true);
  nlohmann::json j = minimal();
  j["inputs"].push_back({{"name", "g"}, {"dtype", "bf16"}, {"shape", {"C"}}});
  j["outputs"].push_back({{"name", "a"}, {"in_place_of", "g"}});
  j["outputs"].push_back({{"name", "b"}, {"in_place_of", "g"}});
  EXPECT_THROW(parse_spec(j, "cat/p", "/tmp/p"), UsageError);
}

// A 0-dim tensor (shape []) is one element: a loss or a norm.
TEST(Spec, ZeroDimScalarsResolveToOneElement) {
  nlohmann::json j = minimal();
  j["outputs"].push_back({{"name", "norm"}, {"dtype", "f32"}, {"shape", nlohmann::json::array()},
                          {"tolerance", {{"kind", "rounding"}, {"factor", "4"}}}});
  j["inputs"].push_back({{"name", "lr"}, {"dtype", "f32"}, {"shape", nlohmann::json::array()}});
  Spec s = parse_spec(j, "cat/p", "/tmp/p");
  Resolved r = resolve(s, "small", "", 2, 1);
  EXPECT_TRUE(r.outputs[2].shape.empty());
  EXPECT_EQ(r.outputs[2].numel, 1);
  EXPECT_TRUE(r.inputs[1].shape.empty());
  EXPECT_EQ(r.inputs[1].numel, 1);
}

TEST(Spec, Fp8DtypesAreOneByteFloats) {
  EXPECT_EQ(dtype_from_string("e4m3"), MGK_E4M3);
  EXPECT_EQ(dtype_from_string("e5m2"), MGK_E5M2);
  for (DType t : {MGK_E4M3, MGK_E5M2}) {
    EXPECT_EQ(dtype_bytes(t), 1);
    EXPECT_TRUE(is_float(t));
  }
  EXPECT_EQ(unit_roundoff(MGK_E4M3), 0x1p-4);
  EXPECT_EQ(unit_roundoff(MGK_E5M2), 0x1p-3);
  nlohmann::json j = minimal();
  j["outputs"].push_back({{"name", "q"}, {"dtype", "e4m3"}, {"shape", {"C"}}});
  EXPECT_EQ(resolve(parse_spec(j, "cat/p", "/tmp/p"), "small", "", 2, 0).outputs[2].numel * 1, 512);
}

TEST(Spec, ResolveRejectsUnknownSizeDtypeAndWorld) {
  Spec s = parse_spec(minimal(), "cat/p", "/tmp/p");
  EXPECT_THROW(resolve(s, "medium", "", 2, 0), UsageError);
  EXPECT_THROW(resolve(s, "small", "f64", 2, 0), UsageError);
  s.max_world = 8;
  EXPECT_THROW(resolve(s, "small", "", 9, 0), UsageError);
  EXPECT_THROW(resolve(s, "small", "", 1, 0), UsageError);
}

// A world the range allows but a dim cannot follow (top-2 of E = W experts at W = 1) is a
// usage error before anything runs, not an output mismatch after.
TEST(Spec, UnmetRequirementIsAUsageErrorThatSaysWhy) {
  nlohmann::json j = minimal();
  j["requires"] = {{{"expr", "C >= 256"}, {"why", "a rank holds at least one block"}}};
  Spec s = parse_spec(j, "cat/p", "/tmp/p");
  s.max_world = 8;
  EXPECT_NO_THROW(resolve(s, "small", "", 4, 0));  // C = 256
  try {
    resolve(s, "small", "", 8, 0);
    FAIL() << "C = 128 < 256 should not resolve";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cat/p size small at W = 8 is outside the problem: it needs C >= 256 (C = 128): a "
              "rank holds at least one block");
  }
  EXPECT_THROW(size_dims(s, "small", 8), UsageError);  // every caller, not only resolve
}

TEST(Spec, MalformedRequirementNamesTheField) {
  for (const char* bad : {R"json("C > 1")json", R"json([{"why": "x"}])json", R"json([{"expr": "C >", "why": "x"}])json",
                          R"json([{"expr": "C > 1"}])json", R"json([{"expr": "C > 1", "why": 3}])json"}) {
    nlohmann::json j = minimal();
    j["requires"] = nlohmann::json::parse(bad);
    try {
      parse_spec(j, "cat/p", "/tmp/p");
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("field 'requires'"), std::string::npos) << e.what();
    }
  }
}

TEST(Spec, StructureCheckParsesAndMalformedOnesNameTheField) {
  nlohmann::json j = minimal();
  j["world_size"] = {{"min", 2}, {"max", 8}};
  j["structure_check"] = {{"worlds", {4, 8}}, {"why", "the DP group has one member at W = 2"}};
  const Spec s = parse_spec(j, "cat/p", "/tmp/p");
  EXPECT_EQ(s.structure_check.worlds, (std::vector<int>{4, 8}));
  EXPECT_EQ(s.structure_check.why, "the DP group has one member at W = 2");
  EXPECT_TRUE(parse_spec(minimal(), "cat/p", "/tmp/p").structure_check.worlds.empty());
  for (const char* bad : {R"json([4])json", R"json({"worlds": [4]})json", R"json({"worlds": [], "why": "x"})json",
                          R"json({"worlds": [2], "why": "x"})json", R"json({"worlds": [16], "why": "x"})json",
                          R"json({"worlds": [8, 4], "why": "x"})json", R"json({"worlds": [4.5], "why": "x"})json",
                          R"json({"worlds": [4], "why": ""})json"}) {
    j["structure_check"] = nlohmann::json::parse(bad);
    try {
      parse_spec(j, "cat/p", "/tmp/p");
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("field 'structure_check"), std::string::npos) << e.what();
    }
  }
}

TEST(Catalog, EveryProblemInTheSuiteParsesAndResolvesAtTwoFourAndEightRanks) {
  auto names = list_names();
  ASSERT_GE(names.size(), 8u);
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    Spec s = load(n);
    EXPECT_TRUE(std::filesystem::exists(s.reference_path()));
    EXPECT_TRUE(std::filesystem::exists(s.statement_path()));
    EXPECT_GE(s.default_sizes.size(), 2u) << "the evaluator checks at least two sizes";
    for (int w : {2, 4, 8}) {
      if (w < s.min_world || w > s.max_world) continue;  // e.g. moe/moe_ep_narrow starts at 4
      for (const auto& size : s.size_names)
        for (int r = 0; r < w; ++r) EXPECT_NO_THROW(resolve(s, size, "", w, r));
    }
    EXPECT_LE(s.min_world, 4) << "every problem runs at 4 or 8 ranks";
  }
}

// A vectorised kernel that forgets its tail must fail under the defaults: every problem's
// default sizes include a preset whose byte counts are not multiples of 16, at every
// world size (tests/bad_candidates/forgets_tail.cu is the kernel).
TEST(Catalog, EveryProblemsDefaultSizesIncludeATail) {
  // Problems whose rows are whole 16-byte words at every size: cuDNN's fused attention takes
  // head dims that are multiples of 8 (their `odd` presets are uneven in sequence and heads
  // instead); the router logits of 8 experts in bf16 are 16 bytes a token; a problem of
  // scalars has no rows.
  const std::set<std::string> rows_always_whole_words = {"attention/ring_attention", "attention/ulysses_attention_e2e",
                                                         "attention/ring_attention_backward_dp",
                                                         "losses/load_balancing_loss_fn", "losses/grad_acc_loss"};
  for (const auto& n : list_names()) {
    SCOPED_TRACE(n);
    if (rows_always_whole_words.count(n)) continue;
    Spec s = load(n);
    for (int w : {2, 4, 8}) {
      if (w < s.min_world || w > s.max_world) continue;
      auto tails = tail_sizes(s, s.default_sizes, "", w);
      EXPECT_FALSE(tails.empty()) << "at W=" << w;
    }
  }
  Spec ar = load("collectives/all_reduce");
  EXPECT_EQ(tail_sizes(ar, {"small", "odd"}, "bf16", 2), (std::vector<std::string>{"odd (x: 666666 B on rank 0)"}));
  // A batch of 2 is no row (medium: B = 2, rows of D = 128), and a scalar output (the total
  // norm, 4 bytes) is no tail: only `odd` has tails there.
  EXPECT_EQ(tail_sizes(load("sp/ulysses_gather_seq_scatter_heads"), {"medium", "odd"}, "bf16", 2).size(), 1u);
  EXPECT_EQ(tail_sizes(load("dp/clip_grad_norm_no_ep"), {"pkb", "medium", "odd"}, "bf16", 2).size(), 1u);
}

TEST(Catalog, CollectivePresetsMatchTheirByteTargets) {
  // small <= 1 MB per rank, medium ~16 MB, large >= 256 MB (bf16 input of all-reduce).
  Spec s = load("collectives/all_reduce");
  auto bytes = [&](const std::string& size) { return resolve(s, size, "bf16", 2, 0).inputs[0].numel * 2; };
  EXPECT_LE(bytes("small"), 1 << 20);
  EXPECT_EQ(bytes("medium"), 16 << 20);
  EXPECT_GE(bytes("large"), 256ll << 20);
}

TEST(Catalog, UnknownNamesSuggestAndGlobsMatch) {
  try {
    load("collectives/allreduce");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mgk problems"), std::string::npos);
  }
  EXPECT_EQ(load("all_reduce").name, "collectives/all_reduce");  // unambiguous short name
  EXPECT_TRUE(glob_match("collectives/*", "collectives/all_reduce"));
  EXPECT_TRUE(glob_match("*reduce*", "collectives/reduce_scatter"));
  EXPECT_FALSE(glob_match("tp/*", "collectives/all_reduce"));
  EXPECT_EQ(match("collectives/*reduce*").size(), 3u);
}

}  // namespace
}  // namespace mgk::problems
