#include "core/schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "core/progress.h"

namespace osprey::bench {
namespace {

TEST(BenchSchedule, GridIsTheProductWithPrecisionFastest) {
  CellAxes axes;
  axes.models = 2;
  axes.batches = {1, 8};
  axes.threads = {1, 2};
  axes.precisions = {"fp32", "fast"};
  const auto cells = make_cell_grid(axes);
  ASSERT_EQ(cells.size(), 2u * 2 * 2 * 2);
  EXPECT_EQ(cells[0].precision, "fp32");
  EXPECT_EQ(cells[1].precision, "fast");
  EXPECT_EQ(cells[1].threads, 1);
  EXPECT_EQ(cells[2].threads, 2);
  EXPECT_EQ(cells[4].batch, 8);
  EXPECT_EQ(cells[8].model, 1u);
  std::set<std::string> ids;
  for (const auto& c : cells) {
    ids.insert(cell_id(c));
    EXPECT_EQ(c.shape_mode, "dynamic");
    EXPECT_FALSE(c.pinned);
  }
  EXPECT_EQ(ids.size(), cells.size());
  EXPECT_EQ(cell_id(cells[5]), "m0_s0_b8_t1_fast");
}

// Shape mode nests inside batch, affinity inside threads; every combination appears once.
TEST(BenchSchedule, GridSweepsShapeModeAndAffinity) {
  CellAxes axes;
  axes.shape_sets = 2;
  axes.batches = {1, 4};
  axes.shape_modes = {"dynamic", "fixed"};
  axes.threads = {1, 2};
  axes.pinned = {false, true};
  const auto cells = make_cell_grid(axes);
  ASSERT_EQ(cells.size(), 2u * 2 * 2 * 2 * 2);
  EXPECT_FALSE(cells[0].pinned);
  EXPECT_TRUE(cells[1].pinned);
  EXPECT_EQ(cells[1].threads, 1);
  EXPECT_EQ(cells[2].threads, 2);
  EXPECT_EQ(cells[3].shape_mode, "dynamic");
  EXPECT_EQ(cells[4].shape_mode, "fixed");
  EXPECT_EQ(cells[4].batch, 1);
  EXPECT_EQ(cells[8].batch, 4);
  std::set<std::string> ids;
  std::set<std::tuple<size_t, int64_t, std::string, int, bool>> combos;
  for (const auto& c : cells) {
    ids.insert(cell_id(c));
    combos.insert({c.shape_set, c.batch, c.shape_mode, c.threads, c.pinned});
  }
  EXPECT_EQ(ids.size(), cells.size());
  EXPECT_EQ(combos.size(), cells.size());
  EXPECT_EQ(cell_id(cells[0]), "m0_s0_b1_t1_fp32");
  EXPECT_EQ(cell_id(cells[1]), "m0_s0_b1_t1_pin_fp32");
  EXPECT_EQ(cell_id(cells[7]), "m0_s0_b1_fixed_t2_pin_fp32");
}

TEST(BenchSchedule, NextRoundKeepsFrameworkOrder) {
  EXPECT_EQ(next_round({true, true, true}), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(next_round({false, true, true}), (std::vector<size_t>{1, 2}));
  EXPECT_TRUE(next_round({false, false}).empty());
}

TEST(BenchProgress, RendersBarAndCount) {
  EXPECT_EQ(ProgressBar::render(1, 4, "cell", 8), "[##......] 1/4 cell");
  EXPECT_EQ(ProgressBar::render(9, 4, "", 4), "[####] 4/4");
  EXPECT_EQ(ProgressBar::render(0, 0, "", 2), "[##] 0/0");
}

}  // namespace
}  // namespace osprey::bench
