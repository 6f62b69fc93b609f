#include "core/schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "core/progress.h"

namespace osprey::bench {
namespace {

TEST(BenchSchedule, GridIsTheProductWithPrecisionFastest) {
  const auto cells = make_cell_grid(2, 1, {1, 8}, {1, 2}, {"fp32", "fast"});
  ASSERT_EQ(cells.size(), 2u * 2 * 2 * 2);
  EXPECT_EQ(cells[0].precision, "fp32");
  EXPECT_EQ(cells[1].precision, "fast");
  EXPECT_EQ(cells[1].threads, 1);
  EXPECT_EQ(cells[2].threads, 2);
  EXPECT_EQ(cells[4].batch, 8);
  EXPECT_EQ(cells[8].model, 1u);
  std::set<std::string> ids;
  for (const auto& c : cells) ids.insert(cell_id(c));
  EXPECT_EQ(ids.size(), cells.size());
  EXPECT_EQ(cell_id(cells[5]), "m0_s0_b8_t1_fast");
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
