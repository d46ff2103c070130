// The string pool (builder/base/string_pool.h): dense ids in order of first
// interning, one id per distinct string across table growth, and the
// short-string cache agreeing with the table; IdIndex (base/id_index.h),
// the flat map keyed by those ids.
#include "base/string_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/id_index.h"

namespace graph_ascend {
namespace {

TEST(StringPoolTest, IdsAreDenseInOrderOfFirstInterning) {
  StringPool pool;
  EXPECT_EQ(pool.Intern(""), 0u);
  EXPECT_EQ(pool.InternShort(""), 0u);
  std::vector<std::string> strings;
  for (int i = 0; i < 200000; ++i) {
    // Lengths 1..80, so every word layout of the hash and the cache is hit.
    strings.push_back(std::string(1 + i % 80, 'a' + i % 26) + std::to_string(i));
  }
  for (size_t i = 0; i < strings.size(); ++i) {
    uint32_t id = i % 3 == 0 ? pool.InternShort(strings[i]) : pool.Intern(strings[i]);
    ASSERT_EQ(id, i + 1) << strings[i];
  }
  EXPECT_EQ(pool.size(), strings.size() + 1);
  for (size_t i = 0; i < strings.size(); ++i) {
    ASSERT_EQ(pool.Get(static_cast<uint32_t>(i + 1)), strings[i]);
    ASSERT_EQ(pool.Find(strings[i]), static_cast<int64_t>(i + 1));
    ASSERT_EQ(pool.Intern(strings[i]), i + 1);
    ASSERT_EQ(pool.InternShort(strings[i]), i + 1);
  }
  EXPECT_EQ(pool.Find("never interned"), -1);
  EXPECT_EQ(pool.Find(""), 0);
}

// Strings of 17..64 bytes that share their first and last 8 bytes differ only
// in the middle, which the cache must compare.
TEST(StringPoolTest, ShortCacheTellsApartStringsEqualAtBothEnds) {
  StringPool pool;
  std::vector<uint32_t> ids;
  for (size_t n = 17; n <= 64; ++n) {
    for (char middle : {'x', 'y'}) {
      std::string s = "HEADHEAD" + std::string(n - 16, middle) + "TAILTAIL";
      uint32_t id = pool.InternShort(s);
      EXPECT_EQ(pool.Get(id), s);
      EXPECT_EQ(pool.InternShort(s), id);
      ids.push_back(id);
    }
  }
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_NE(ids[i], ids[i - 1]);
  // Short strings whose words overlap ("abc" vs "acc": same first and last byte).
  uint32_t abc = pool.InternShort("abc"), acc = pool.InternShort("acc"), ab = pool.InternShort("ab");
  EXPECT_NE(abc, acc);
  EXPECT_NE(abc, ab);
  EXPECT_EQ(pool.Get(acc), "acc");
  EXPECT_EQ(pool.Get(ab), "ab");
}

TEST(StringPoolTest, EmbeddedZeroBytesAreDistinct) {
  StringPool pool;
  std::string a("a\0b", 3), b("a\0c", 3), c("a", 1);
  uint32_t ia = pool.InternShort(a), ib = pool.InternShort(b), ic = pool.Intern(c);
  EXPECT_NE(ia, ib);
  EXPECT_NE(ia, ic);
  EXPECT_EQ(pool.Get(ia), a);
  EXPECT_EQ(pool.Intern(b), ib);
}

TEST(IdIndexTest, GetSetInsertAndForEach) {
  IdIndex index;
  EXPECT_EQ(index.Get(0), IdIndex::kNone);
  EXPECT_EQ(index.Get(1000000), IdIndex::kNone) << "beyond the array";
  index.Set(7, 3);
  index.Set(2, 0);
  EXPECT_EQ(index.Get(7), 3u);
  EXPECT_TRUE(index.Contains(2));
  EXPECT_FALSE(index.Contains(5));
  EXPECT_EQ(index.Insert(7, 9), 3u) << "an id with an index keeps it";
  EXPECT_EQ(index.Insert(5, 9), 9u);
  index.Set(7, 4);
  EXPECT_EQ(index.size(), 3u);
  std::vector<std::pair<uint32_t, uint32_t>> seen;
  index.ForEach([&](uint32_t id, uint32_t i) { seen.emplace_back(id, i); });
  EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, uint32_t>>{{2, 0}, {5, 9}, {7, 4}}));
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Get(7), IdIndex::kNone);
}

}  // namespace
}  // namespace graph_ascend
