// The example model's invariants, in process: the stage split, init and
// arithmetic independent of the pipeline split, AdamW, checkpoints, data.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpt/adamw.h"
#include "gpt/checkpoint.h"
#include "gpt/corpus.h"
#include "gpt/stage.h"
#include "gpt/state.h"
#include "gpt/trainer.h"

namespace trainmover::gpt {
namespace {

ModelShape small_shape() {
  ModelShape shape;
  shape.d_model = 16;
  shape.n_layers = 3;
  shape.n_heads = 2;
  shape.seq_len = 8;
  return shape;
}

TEST(GptModel, StagesSplitTheBlocksEvenly) {
  ModelShape shape = small_shape();
  shape.n_layers = 5;
  const int expected[3][2] = {{0, 2}, {2, 4}, {4, 5}};
  for (int s = 0; s < 3; ++s) {
    auto span = stage_span(shape, s, 3);
    ASSERT_TRUE(span.ok()) << span.status().message();
    EXPECT_EQ(span->first_layer, expected[s][0]);
    EXPECT_EQ(span->end_layer, expected[s][1]);
  }
  auto too_many = stage_span(shape, 0, 6);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("at least 6 layers"), std::string::npos);
}

TEST(GptModel, ShapeValidationNamesTheField) {
  ModelShape shape = small_shape();
  shape.n_heads = 3;
  Status st = validate(shape);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("n_heads"), std::string::npos) << st.message();
}

// The stages' states, side by side, for `stages` stages.
std::vector<TrainState> stage_states(const ModelShape& shape, int stages, uint64_t seed) {
  std::vector<TrainState> states;
  for (int s = 0; s < stages; ++s)
    states.emplace_back(shape, ParamLayout(shape, stage_span(shape, s, stages).value()), seed);
  return states;
}

TEST(GptModel, InitAndHashDoNotDependOnTheSplit) {
  const ModelShape shape = small_shape();
  const TrainState whole = stage_states(shape, 1, 7).front();
  std::vector<float> joined;
  uint64_t chained = kFnvOffset;
  for (const TrainState& s : stage_states(shape, 3, 7)) {
    joined.insert(joined.end(), s.params.begin(), s.params.end());
    chained = s.param_hash(chained);
  }
  EXPECT_EQ(joined, whole.params);
  EXPECT_EQ(chained, whole.param_hash());
  EXPECT_NE(stage_states(shape, 1, 8).front().param_hash(), whole.param_hash());
}

// Forward and backward of a batch through `stages` stages, activations and
// gradients handed on as the pipeline does; returns the loss and the
// gradients joined in stage order.
std::pair<float, std::vector<float>> run_split(const ModelShape& shape, int stages) {
  const int batch = 2;
  std::vector<Stage<float>> model;
  std::vector<StageCache<float>> caches(stages);
  std::vector<std::vector<float>> grads;
  for (int s = 0; s < stages; ++s) {
    model.emplace_back(shape, stage_span(shape, s, stages).value(), batch);
    model.back().resize(caches[s]);
    grads.emplace_back(model.back().layout().total(), 0.0f);
  }
  auto states = stage_states(shape, stages, 3);
  auto corpus = Corpus::load(default_corpus_path(shape.seq_len + 1).value(), shape.seq_len);
  corpus->sample(3, 0, 0, 0, batch, caches.front().tokens.data(), nullptr);
  corpus->sample(3, 0, 0, 0, batch, nullptr, caches.back().targets.data());
  float loss = 0;
  std::vector<float> act;
  for (int s = 0; s < stages; ++s) {
    loss = model[s].forward(states[s].params.data(), act.data(), caches[s]);
    act = caches[s].out;
  }
  std::vector<float> dy, dx(model[0].activation_count());
  for (int s = stages - 1; s >= 0; --s) {
    model[s].backward(states[s].params.data(), caches[s], dy.data(), 0.01f, grads[s].data(),
                      dx.data());
    dy = dx;
  }
  std::vector<float> joined;
  for (const auto& g : grads) joined.insert(joined.end(), g.begin(), g.end());
  return {loss, joined};
}

TEST(GptModel, PipelineSplitKeepsTheArithmeticBitwise) {
  const auto whole = run_split(small_shape(), 1);
  for (int stages : {2, 3}) {
    const auto split = run_split(small_shape(), stages);
    EXPECT_EQ(split.first, whole.first) << stages << " stages";
    EXPECT_TRUE(split.second == whole.second) << stages << " stages: gradients differ";
  }
  EXPECT_GT(whole.first, 0.0f);
}

TEST(GptModel, AdamWFirstStepMovesByTheLearningRate) {
  const ModelShape shape = small_shape();
  const ParamLayout layout(shape, stage_span(shape, 0, 1).value());
  TrainState state(shape, layout, 1);
  const std::vector<float> before = state.params;
  std::vector<float> grads(layout.total(), 0.5f);
  AdamWConfig config;
  adamw_update(config, layout, 1, grads.data(), state);
  for (const TensorInfo& t : layout.tensors()) {
    const size_t i = t.offset;
    const float decay = t.decay ? config.lr * config.weight_decay : 0.0f;
    // Bias-corrected m / sqrt(v) is g / |g| = 1 on the first step.
    EXPECT_NEAR(state.params[i], before[i] - decay * before[i] - config.lr, 1e-6) << t.name;
  }
}

constexpr int kBatch = 8;  // the fixture's state is at step 40, data position 320

class GptCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpt-ckpt-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    state_.counters.step = 40;
    state_.counters.data_position = 320;
    state_.adam_m[3] = 1.5f;
    state_.adam_v[5] = 2.5f;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Status load(const ModelShape& shape, const StageSpan& span, TrainState& into) {
    return load_checkpoint(checkpoint_path(dir_, span.stage, 40), shape, span, kBatch, into);
  }
  void flip_byte(size_t at) {
    std::fstream f(checkpoint_path(dir_, 0, 40), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = static_cast<char>(f.get() ^ 0x10);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(c);
  }
  std::string load_error() {
    TrainState fresh(shape_, layout_, 1);
    Status st = load(shape_, span_, fresh);
    EXPECT_EQ(fresh.params, TrainState(shape_, layout_, 1).params) << "a failed load changed it";
    return st.ok() ? "" : st.message();
  }

  ModelShape shape_ = small_shape();
  StageSpan span_ = stage_span(shape_, 0, 1).value();
  ParamLayout layout_{shape_, span_};
  TrainState state_{shape_, layout_, 1};
  std::string dir_;
};

TEST_F(GptCheckpoint, RoundTripsTheWholeState) {
  ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  struct stat st {};
  ASSERT_EQ(::stat(checkpoint_path(dir_, 0, 40).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0007, 0u) << "a checkpoint must not be world-accessible";
  TrainState loaded(shape_, layout_, 1);
  ASSERT_TRUE(load(shape_, span_, loaded).ok());
  EXPECT_EQ(loaded.params, state_.params);
  EXPECT_EQ(loaded.adam_m, state_.adam_m);
  EXPECT_EQ(loaded.adam_v, state_.adam_v);
  EXPECT_EQ(loaded.counters.step, 40u);
  EXPECT_EQ(loaded.counters.data_position, 320u);
  EXPECT_EQ(latest_checkpoint_step(dir_, 0).value(), 40u);
  EXPECT_EQ(latest_checkpoint_step(dir_, 1).value(), 0u);
}

TEST_F(GptCheckpoint, KeepsTheTwoLatest) {
  for (uint64_t step : {10, 20, 30, 40}) {
    state_.counters.step = step;
    ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(dir_, 0, 20)));
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir_, 0, 30)));
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(dir_, 0, 40)));
}

TEST_F(GptCheckpoint, RefusesADamagedPayload) {
  ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  flip_byte(96 + 1000);
  EXPECT_NE(load_error().find("damaged payload"), std::string::npos) << load_error();
}

TEST_F(GptCheckpoint, RefusesADamagedHeader) {
  ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  flip_byte(20);
  EXPECT_NE(load_error().find("damaged header"), std::string::npos) << load_error();
}

TEST_F(GptCheckpoint, RefusesATruncatedFile) {
  ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  std::filesystem::resize_file(checkpoint_path(dir_, 0, 40), 5000);
  EXPECT_NE(load_error().find("truncated"), std::string::npos) << load_error();
}

TEST_F(GptCheckpoint, RefusesAnotherFile) {
  std::filesystem::create_directories(dir_);
  std::ofstream(checkpoint_path(dir_, 0, 40)) << std::string(200, 'x');
  EXPECT_NE(load_error().find("not a trainmover-gpt checkpoint"), std::string::npos)
      << load_error();
}

TEST_F(GptCheckpoint, RefusesAnotherShapeOrSplitOrSeed) {
  ASSERT_TRUE(save_checkpoint(dir_, shape_, span_, state_).ok());
  ModelShape wider = shape_;
  wider.d_model = 32;
  TrainState other(wider, ParamLayout(wider, span_), 1);
  Status st = load(wider, span_, other);
  EXPECT_NE(st.message().find("d_model 16"), std::string::npos) << st.message();
  const StageSpan half = stage_span(shape_, 0, 2).value();
  TrainState first(shape_, ParamLayout(shape_, half), 1);
  st = load(shape_, half, first);
  EXPECT_NE(st.message().find("stages 1"), std::string::npos) << st.message();
  TrainState seeded(shape_, layout_, 2);
  st = load(shape_, span_, seeded);
  EXPECT_NE(st.message().find("seed 1"), std::string::npos) << st.message();
  TrainState batched(shape_, layout_, 1);
  st = load_checkpoint(checkpoint_path(dir_, 0, 40), shape_, span_, 4, batched);
  EXPECT_NE(st.message().find("not that of --batch 4"), std::string::npos) << st.message();
  EXPECT_EQ(batched.counters.step, 0u) << "a refused checkpoint changed the state";
}

// The DP = 1 recovery path: roll back to the last checkpoint in place, redo
// the lost steps, and end with the parameters of a run without the rollback.
TEST_F(GptCheckpoint, ATrainerRollsBackInPlaceAndRedoesTheStepsExactly) {
  auto comm = StageComm::create(1, 1);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  TrainOptions options;
  options.shape = shape_;
  options.steps = 8;
  options.log_every = 0;
  options.checkpoint_dir = dir_;
  options.checkpoint_every = 5;
  auto trainer = Trainer::create(options, **comm);
  ASSERT_TRUE(trainer.ok()) << trainer.status().message();
  auto straight = (*trainer)->run();
  ASSERT_TRUE(straight.ok()) << straight.status().message();
  std::filesystem::remove(checkpoint_path(dir_, 0, 8));
  ASSERT_TRUE((*trainer)->restore_checkpoint().ok());
  EXPECT_EQ((*trainer)->state().counters.step, 5u);
  EXPECT_NE((*trainer)->model_hash().value(), straight->param_hash);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*trainer)->step(false).ok());
  EXPECT_EQ((*trainer)->model_hash().value(), straight->param_hash);
}

TEST(GptCorpus, EachStepsDataIsAFunctionOfSeedStepAndReplica) {
  auto corpus = Corpus::load(default_corpus_path(33).value(), 32);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  auto draw = [&](uint64_t seed, uint64_t step, int dp) {
    std::vector<int32_t> tokens(4 * 32), targets(4 * 32);
    corpus->sample(seed, step, dp, 0, 4, tokens.data(), targets.data());
    for (int i = 0; i + 1 < 32; ++i) EXPECT_EQ(tokens[i + 1], targets[i]);
    return tokens;
  };
  EXPECT_EQ(draw(1, 5, 0), draw(1, 5, 0));
  EXPECT_NE(draw(1, 5, 0), draw(1, 6, 0));
  EXPECT_NE(draw(1, 5, 0), draw(1, 5, 1));
  EXPECT_NE(draw(1, 5, 0), draw(2, 5, 0));
}

TEST(GptCorpus, ATooShortTextIsRefusedByName) {
  char path[] = "/tmp/gpt-short-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);
  ::close(fd);
  auto corpus = Corpus::load(path, 32);
  ::unlink(path);
  ASSERT_FALSE(corpus.ok());
  EXPECT_NE(corpus.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace trainmover::gpt
