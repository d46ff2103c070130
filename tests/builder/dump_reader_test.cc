// Reading msprobe's dump directory files (reference §3) and flattening dump
// entries into items (§4), with the overflow scenes of §7 that the reader
// computes in the same pass.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "dump/dump_data.h"
#include "test_files.h"

namespace graph_ascend::dump {
namespace {

using graph_ascend::testing::DumpJson;
using graph_ascend::testing::TempDir;
using graph_ascend::testing::Tensor;
using graph_ascend::testing::WriteFile;

// A flattened item as plain strings, for assertions.
struct FlatItem {
  std::string key;  // full item key
  ItemState state;
  bool is_null;
  std::vector<std::string> field_names;
  std::map<std::string, std::string> fields;  // name -> value as text (json for lists)
};

std::string ValueText(const StringPool& pool, const Value& v) {
  switch (v.kind) {
    case ValueKind::kNull: return "null";
    case ValueKind::kBool: return v.boolean ? "true" : "false";
    case ValueKind::kInteger: return "int:" + std::to_string(v.integer);
    case ValueKind::kNumber: {
      if (std::isnan(v.number)) return "float:nan";
      if (std::isinf(v.number)) return v.number > 0 ? "float:inf" : "float:-inf";
      char buf[64];
      snprintf(buf, sizeof(buf), "float:%.17g", v.number);
      return buf;
    }
    case ValueKind::kString: return "str:" + std::string(pool.Get(v.string));
    case ValueKind::kJson: return "json:" + std::string(pool.Get(v.string));
  }
  return "?";
}

class DumpReaderTest : public ::testing::Test {
 protected:
  // Reads `dump_json` (written to a temp file) into data_.
  void Read(const std::string& dump_json, bool overflow_check = false) {
    WriteFile(dir_ / "dump.json", dump_json);
    DumpOptions options;
    options.overflow_check = overflow_check;
    auto r = ReadDumpJson(dir_ / "dump.json", &pool_, options);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    data_ = std::move(*r);
  }

  Error ReadError(const std::string& dump_json) {
    WriteFile(dir_ / "dump.json", dump_json);
    auto r = ReadDumpJson(dir_ / "dump.json", &pool_, DumpOptions{});
    EXPECT_FALSE(r.ok()) << "accepted: " << dump_json;
    return r.ok() ? Error{} : r.error();
  }

  const DumpEntry& Entry(const std::string& name) {
    int64_t id = pool_.Find(name);
    EXPECT_GE(id, 0) << name;
    const DumpEntry* e = id < 0 ? nullptr : data_.Find(static_cast<uint32_t>(id));
    EXPECT_NE(e, nullptr) << name;
    static const DumpEntry kNone{};
    return e == nullptr ? kNone : *e;
  }

  FlatItem Flat(const std::string& name, const DumpItem& item) {
    FlatItem f;
    std::string_view key = pool_.Get(item.key);
    f.key = (item.flags & kItemFullKey) ? std::string(key) : name + std::string(key);
    f.state = item.state;
    f.is_null = (item.flags & kItemNull) != 0;
    for (uint32_t i = item.first_field; i < item.first_field + item.field_count; ++i) {
      std::string fname(pool_.Get(data_.fields[i].name));
      f.field_names.push_back(fname);
      f.fields[fname] = ValueText(pool_, data_.fields[i].value);
    }
    return f;
  }

  std::vector<FlatItem> Inputs(const std::string& name) {
    const DumpEntry& e = Entry(name);
    std::vector<FlatItem> out;
    for (uint32_t k = 0; k < e.input_count; ++k) out.push_back(Flat(name, data_.items[e.first_item + k]));
    return out;
  }
  std::vector<FlatItem> Outputs(const std::string& name) {
    const DumpEntry& e = Entry(name);
    std::vector<FlatItem> out;
    for (uint32_t k = 0; k < e.output_count; ++k) {
      out.push_back(Flat(name, data_.items[e.first_item + e.input_count + k]));
    }
    return out;
  }
  static std::vector<std::string> Keys(const std::vector<FlatItem>& items) {
    std::vector<std::string> keys;
    for (const FlatItem& i : items) keys.push_back(i.key);
    return keys;
  }

  OverflowLevel Overflow(const std::string& entry_json) {
    Read(DumpJson(R"("E": )" + entry_json), true);
    return Entry("E").overflow;
  }
  OverflowLevel OverflowOf(const std::string& name, const std::string& entry_json) {
    Read(DumpJson("\"" + name + "\": " + entry_json), true);
    return Entry(name).overflow;
  }

  TempDir dir_;
  StringPool pool_;
  DumpData data_;
};

const std::string kT = Tensor("[2, 4]", "1.0", "-1.0", "0.0", "2.0");
const std::string kNanOut = Tensor("[2]", "NaN", "0.0", "NaN", "1.0");

TEST_F(DumpReaderTest, TopLevelKeys) {
  Read(R"({"task": "tensor", "level": "L0", "framework": "pytorch", "dump_data_dir": "/d/dump_tensor_data",
           "extra": [1, {"x": 2}], "data": {}})");
  EXPECT_EQ(data_.task, "tensor");
  EXPECT_EQ(data_.level, "L0");
  EXPECT_EQ(data_.framework, "pytorch");
  EXPECT_EQ(data_.detected_framework, "pytorch");
  EXPECT_TRUE(data_.has_dump_data_dir);
  EXPECT_EQ(data_.dump_data_dir, "/d/dump_tensor_data");
  EXPECT_TRUE(data_.entries.empty());

  Read(DumpJson(""));
  EXPECT_FALSE(data_.has_dump_data_dir) << "dump_data_dir: null";
  EXPECT_EQ(data_.task, "statistics");
}

// §4.1 step 2: input_args, input_kwargs, input, output, parameters, in that
// order whatever the order in the file; parameters go to input_data (§4.3).
TEST_F(DumpReaderTest, ForwardModuleItemOrder) {
  const std::string name = "Module.fc.Linear.forward.0";
  Read(DumpJson("\"" + name + R"(": {"output": [)" + kT + R"(], "parameters": {"weight": )" + kT + ", \"bias\": " + kT +
                R"(}, "is_recompute": false, "input_kwargs": {"alpha": {"type": "float", "value": 0.5}},
                   "input_args": [)" +
                kT + ", " + kT + "]}"));
  EXPECT_EQ(Keys(Inputs(name)), (std::vector<std::string>{name + ".input.0", name + ".input.1", name + ".input.alpha",
                                                          name + ".parameters.weight", name + ".parameters.bias"}));
  EXPECT_EQ(Keys(Outputs(name)), std::vector<std::string>{name + ".output.0"});
  std::vector<FlatItem> in = Inputs(name);
  EXPECT_EQ(in[0].state, ItemState::kInput);
  EXPECT_EQ(in[2].state, ItemState::kInput);
  EXPECT_EQ(in[3].state, ItemState::kParameters);
  EXPECT_EQ(Outputs(name)[0].state, ItemState::kOutput);
  // The leaf's fields are kept in dump order with their JSON types.
  EXPECT_EQ(in[0].field_names,
            (std::vector<std::string>{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm", "requires_grad"}));
  EXPECT_EQ(in[0].fields["shape"], "json:[2, 4]");
  EXPECT_EQ(in[0].fields["Max"], "float:1");
  EXPECT_EQ(in[0].fields["requires_grad"], "true");
  EXPECT_EQ(in[2].fields["value"], "float:0.5");
  EXPECT_EQ(in[2].fields["type"], "str:float");
}

TEST_F(DumpReaderTest, NestedListsTuplesNoneAndScalars) {
  const std::string name = "Torch.split.0.forward";
  Read(DumpJson("\"" + name + R"(": {"input_args": [[)" + kT + R"(, null], {"type": "int", "value": 3},
        {"a": )" +
                kT + R"(, "b": [)" + kT + R"(]}, {"type": "torch.Size", "value": [2, 3]}, 7, "text", false, [], {}],
        "input_kwargs": {"dim": {"type": "int", "value": -1}, "out": null},
        "output": [[)" +
                kT + ", " + kT + R"(], null]})"));
  EXPECT_EQ(Keys(Inputs(name)), (std::vector<std::string>{name + ".input.0.0", name + ".input.0.1", name + ".input.1",
                                                          name + ".input.2.a", name + ".input.2.b.0", name + ".input.3",
                                                          name + ".input.dim", name + ".input.out"}));
  std::vector<FlatItem> in = Inputs(name);
  EXPECT_FALSE(in[0].is_null);
  EXPECT_TRUE(in[1].is_null) << "a null argument is one default item";
  EXPECT_TRUE(in[1].fields.empty());
  EXPECT_EQ(in[2].fields["value"], "int:3");
  EXPECT_EQ(in[5].fields["value"], "json:[2, 3]");
  EXPECT_EQ(in[6].fields["value"], "int:-1");
  EXPECT_TRUE(in[7].is_null);
  EXPECT_EQ(Keys(Outputs(name)),
            (std::vector<std::string>{name + ".output.0.0", name + ".output.0.1", name + ".output.1"}));
  EXPECT_TRUE(Outputs(name)[2].is_null);
}

TEST_F(DumpReaderTest, BackwardEntriesUseInputAndOutput) {
  const std::string name = "Module.fc.Linear.backward.0";
  Read(DumpJson("\"" + name + R"(": {"input": [)" + kT + R"(], "output": [)" + kT + ", null]}"));
  EXPECT_EQ(Keys(Inputs(name)), std::vector<std::string>{name + ".input.0"});
  EXPECT_EQ(Keys(Outputs(name)), (std::vector<std::string>{name + ".output.0", name + ".output.1"}));
}

// §4.1: parameters_grad lists share one name; the last element wins (§4.3).
TEST_F(DumpReaderTest, ParametersGradHasNoListIndexAndLastWins) {
  const std::string name = "Module.fc.Linear.parameters_grad";
  Read(DumpJson("\"" + name + R"(": {"weight": [)" + Tensor("[3, 4]", "1.0", "0.0", "0.5", "1.0") + ", " +
                Tensor("[3, 4]", "9.0", "0.0", "0.5", "1.0") + R"(], "bias": [)" + kT + "]}"));
  std::vector<FlatItem> in = Inputs(name);
  EXPECT_EQ(Keys(in), (std::vector<std::string>{name + ".weight", name + ".bias"}));
  EXPECT_EQ(in[0].state, ItemState::kParametersGrad);
  EXPECT_EQ(in[0].fields["Max"], "float:9");
  EXPECT_TRUE(Outputs(name).empty());
}

// §4.3: the item key comes from data_name minus its extension; a data_name
// that is not under the node name is kept whole.
TEST_F(DumpReaderTest, DataNameGivesTheItemKey) {
  Read(DumpJson(R"("Torch.matmul.0.forward": {"input_args": [)" +
                    Tensor("[2]", "1.0", "0.0", "0.5", "1.0", R"("data_name": "Torch.matmul.0.forward.input.0.pt")") +
                    ", " +
                    Tensor("[2]", "1.0", "0.0", "0.5", "1.0", R"("data_name": "Other.op.3.forward.output.0.npy")") +
                    ", " + Tensor("[2]", "1.0", "0.0", "0.5", "1.0", R"("data_name": "-1")") + "]}",
                "tensor"));
  std::vector<FlatItem> in = Inputs("Torch.matmul.0.forward");
  std::vector<FlatItem> out = Outputs("Torch.matmul.0.forward");
  EXPECT_EQ(Keys(in), (std::vector<std::string>{"Torch.matmul.0.forward.input.0", "Torch.matmul.0.forward.input.2"}));
  EXPECT_EQ(in[0].fields["data_name"], "str:Torch.matmul.0.forward.input.0.pt");
  // ".output." and no ".input." in the key: an output item, however it was dumped.
  EXPECT_EQ(Keys(out), std::vector<std::string>{"Other.op.3.forward.output.0"});
}

// §4.3's split is by substring: a module whose path contains "input" has
// its outputs in input_data, as msprobe does.
TEST_F(DumpReaderTest, OutputSplitIsBySubstring) {
  const std::string name = "Module.input.Linear.forward.0";
  Read(DumpJson("\"" + name + R"(": {"input_args": [)" + kT + R"(], "output": [)" + kT + "]}"));
  EXPECT_EQ(Keys(Inputs(name)), (std::vector<std::string>{name + ".input.0", name + ".output.0"}));
  EXPECT_TRUE(Outputs(name).empty());
}

// The split at the joint of the entry's name and an item's traversal name:
// a name ending in ".input" (".output") makes ".input." (".output.") of the
// key after it; a name that only holds "parameters_grad" is no
// parameters_grad entry.
TEST_F(DumpReaderTest, OutputSplitAcrossTheNamesEnd) {
  Read(DumpJson(R"("M.output": {"input_args": [)" + kT + R"(], "parameters": {"w": )" + kT +
                R"(}}, "M.input": {"output": [)" + kT + R"(]}, "M.x.parameters_gradual.0": {"input_args": [)" + kT +
                R"(], "output": [)" + kT + "]}"));
  EXPECT_EQ(Keys(Inputs("M.output")), std::vector<std::string>{"M.output.input.0"});
  EXPECT_EQ(Keys(Outputs("M.output")), std::vector<std::string>{"M.output.parameters.w"});
  EXPECT_EQ(Keys(Inputs("M.input")), std::vector<std::string>{"M.input.output.0"});
  EXPECT_TRUE(Outputs("M.input").empty());
  std::vector<FlatItem> in = Inputs("M.x.parameters_gradual.0");
  EXPECT_EQ(Keys(in), std::vector<std::string>{"M.x.parameters_gradual.0.input.0"});
  EXPECT_EQ(in[0].state, ItemState::kInput);
  EXPECT_EQ(Keys(Outputs("M.x.parameters_gradual.0")), std::vector<std::string>{"M.x.parameters_gradual.0.output.0"});
}

// input_kwargs is read as a container whose nested values are skipped on
// the first look; a kwargs object (or value) that turns out to be a leaf,
// its "type" after a nested value, is read whole, nested values included.
TEST_F(DumpReaderTest, KwargsWithNestedValues) {
  const std::string leaf_late_type =
      R"({"value": [1, null, {"a": "x\"y"}], "extra": {"k": [2.5, "s"]}, "type": "slice"})";
  Read(DumpJson(R"("F.a.0.forward": {"input_args": [{}, { }], "input_kwargs": {"h": )" + kT +
                R"(, "nested": {"deep": {"t": )" + kT + R"(}, "l": [)" + kT + R"(, null]}, "s": )" + leaf_late_type +
                R"(, "esc": {"k\"q": )" + kT + R"(}}, "output": [)" + kT + R"(]}, "F.b.0.forward": {"input_kwargs": )" +
                leaf_late_type + R"(, "output": []}, "F.c.0.forward": {"input_kwargs": {}, "output": [{}]})"));
  std::vector<FlatItem> in = Inputs("F.a.0.forward");
  EXPECT_EQ(Keys(in), (std::vector<std::string>{"F.a.0.forward.input.h", "F.a.0.forward.input.nested.deep.t",
                                                "F.a.0.forward.input.nested.l.0", "F.a.0.forward.input.nested.l.1",
                                                "F.a.0.forward.input.s", "F.a.0.forward.input.esc.k\"q"}));
  EXPECT_EQ(in[0].fields["Max"], "float:1");
  EXPECT_TRUE(in[3].is_null);
  EXPECT_EQ(in[4].field_names, (std::vector<std::string>{"value", "extra", "type"}));
  EXPECT_EQ(in[4].fields["value"], R"(json:[1, null, {"a": "x\"y"}])");
  EXPECT_EQ(in[4].fields["extra"], R"(json:{"k": [2.5, "s"]})");
  EXPECT_EQ(in[4].fields["type"], "str:slice");
  EXPECT_EQ(Keys(Outputs("F.a.0.forward")), std::vector<std::string>{"F.a.0.forward.output.0"});
  std::vector<FlatItem> b = Inputs("F.b.0.forward");
  EXPECT_EQ(Keys(b), std::vector<std::string>{"F.b.0.forward.input"});
  EXPECT_EQ(b[0].fields["value"], R"(json:[1, null, {"a": "x\"y"}])");
  EXPECT_TRUE(Inputs("F.c.0.forward").empty());
  EXPECT_TRUE(Outputs("F.c.0.forward").empty());
}

// Damage inside a kwargs value that the first look skips unchecked is
// reported where it is, as reading every value would report it, also when
// the damage hides the end of that value.
TEST_F(DumpReaderTest, DamageInsideSkippedKwargs) {
  auto dump = [](const std::string& kwargs) {
    return DumpJson(R"("F.a.0.forward": {"input_kwargs": )" + kwargs + R"(, "output": []})");
  };
  const std::string head = DumpJson(R"("F.a.0.forward": {"input_kwargs": )");
  const size_t at = head.size() - 2;  // DumpJson's closing "}}"
  struct Case {
    std::string kwargs;
    size_t offset;  // of the error, in kwargs
    std::string message;
  };
  const Case cases[] = {
      {R"({"a": {"b": 1 2}})", 14, "expected ',' or '}' in an object"},
      {R"({"a": {"b": [1, ]}})", 16, "expected a value"},
      {R"({"a": {"b": tru}, "c": 1})", 12, "expected true or false"},
      {R"({"a": [1, }, "type": "x"})", 10, "expected a value"},
      {R"({"a": {"b": "\q"}})", 13, "bad escape"},
      {R"({"a": {"b": 1}, "c": {"d": })", 27, "expected a value"},
  };
  for (const Case& c : cases) {
    Error e = ReadError(dump(c.kwargs));
    EXPECT_NE(e.message.find(c.message), std::string::npos) << c.kwargs << ": " << e.message;
    EXPECT_NE(e.where.find("(byte " + std::to_string(at + c.offset) + ")"), std::string::npos)
        << c.kwargs << ": " << e.where;
  }
}

TEST_F(DumpReaderTest, RepeatedEntryKeyKeepsTheLastValueAtTheFirstPlace) {
  Read(DumpJson(R"("A.x.0.forward": {"output": [)" + kT + R"(]}, "B.y.0.forward": {"output": []},
                   "A.x.0.forward": {"output": [)" +
                kT + ", " + kT + "]}"));
  ASSERT_EQ(data_.entries.size(), 2u);
  EXPECT_EQ(pool_.Get(data_.entries[0].name), "A.x.0.forward");
  EXPECT_EQ(Entry("A.x.0.forward").output_count, 2u);
}

// §6.1 md5_find: md5 on a first-level leaf makes the dump an md5 dump.
TEST_F(DumpReaderTest, SummaryMd5Detection) {
  Read(DumpJson(R"("T.a.0.forward": {"output": [)" + Tensor("[2]", "1.0", "0.0", "0.5", "1.0", R"("md5": "0d968558")") +
                "]}"));
  EXPECT_TRUE(data_.summary_md5);
  EXPECT_TRUE(Entry("T.a.0.forward").has_md5);

  Read(DumpJson(R"("T.a.0.forward": {"output": [)" + kT + "]}"));
  EXPECT_FALSE(data_.summary_md5);

  // Only first-level list elements are inspected.
  Read(DumpJson(R"("T.a.0.forward": {"output": [[[)" +
                Tensor("[2]", "1.0", "0.0", "0.5", "1.0", R"("md5": "0d968558")") + "]]]}"));
  EXPECT_FALSE(data_.summary_md5);
}

// §6.2: the framework key when it names pytorch or mindspore, else the
// leaf types (MSAdapter's "mindtorch" dumps hold mindspore tensors).
TEST_F(DumpReaderTest, FrameworkDetection) {
  const std::string ms_leaf = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2], "Max": 1.0,
                                  "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
  Read(DumpJson(R"("Mint.add.0.forward": {"output": [)" + ms_leaf + "]}", "statistics", "mindtorch"));
  EXPECT_EQ(data_.framework, "mindtorch");
  EXPECT_EQ(data_.detected_framework, "mindspore");

  Read(R"({"task": "statistics", "data": {"Torch.add.0.forward": {"output": [)" + kT + "]}}}");
  EXPECT_EQ(data_.framework, "");
  EXPECT_EQ(data_.detected_framework, "pytorch");

  Read(DumpJson(R"("Mint.add.0.forward": {"output": [)" + ms_leaf + "]}", "statistics", "mindspore"));
  EXPECT_EQ(data_.detected_framework, "mindspore");
}

// §5.7: the P2P operations of batch_isend_irecv.
TEST_F(DumpReaderTest, BatchIsendIrecvOperations) {
  const std::string name = "Distributed.batch_isend_irecv.0.forward";
  Read(DumpJson("\"" + name + R"(": {"input_args": [], "output": [[
      {"class_type": "torch.distributed.P2POp", "tensor": )" +
                kT + R"(, "op": "isend", "peer": 1, "tag": 0, "group_id": "5a4d31ad"},
      {"class_type": "torch.distributed.P2POp", "tensor": )" +
                kT + R"(, "op": "irecv", "peer": 3, "tag": 0, "group_id": "5a4d31ad"}]]})"));
  const DumpEntry& e = Entry(name);
  ASSERT_EQ(e.p2p_count, 2u);
  const P2POp& a = data_.p2p[e.first_p2p];
  const P2POp& b = data_.p2p[e.first_p2p + 1];
  EXPECT_EQ(pool_.Get(a.op), "isend");
  EXPECT_EQ(a.peer, 1);
  EXPECT_EQ(pool_.Get(a.group_id), "5a4d31ad");
  EXPECT_EQ(pool_.Get(b.op), "irecv");
  EXPECT_EQ(b.peer, 3);
  // The tensors inside the P2POps are items; the P2POp itself is not a leaf.
  EXPECT_EQ(Keys(Outputs(name)), (std::vector<std::string>{name + ".output.0.0.tensor", name + ".output.0.1.tensor"}));
}

// §7 scenes, in order.
TEST_F(DumpReaderTest, OverflowScenes) {
  const std::string inf_max = Tensor("[2]", "Infinity", "0.0", "0.5", "1.0");
  const std::string ninf_min = Tensor("[2]", "1.0", "-Infinity", "0.5", "1.0");
  EXPECT_EQ(Overflow(R"({"input_args": [)" + kT + R"(], "output": [)" + inf_max + "]}"), OverflowLevel::kCritical);
  EXPECT_EQ(Overflow(R"({"input_args": [)" + ninf_min + R"(], "output": [)" + kNanOut + "]}"), OverflowLevel::kHigh);
  EXPECT_EQ(
      Overflow(R"({"input_args": [)" + kT + R"(], "input_kwargs": {"w": )" + kNanOut + R"(}, "output": [)" + kT + "]}"),
      OverflowLevel::kMedium);
  EXPECT_EQ(Overflow(R"({"input_args": [)" + kT + R"(], "output": [)" + kT + "]}"), OverflowLevel::kNone);
  // Backward entries: "input" stands for the inputs.
  EXPECT_EQ(Overflow(R"({"input": [)" + kNanOut + R"(], "output": [)" + kT + "]}"), OverflowLevel::kMedium);
  // Nested lists are inspected.
  EXPECT_EQ(Overflow(R"({"input_args": [[[)" + kT + R"(]]], "output": [[)" + kNanOut + "]]}"),
            OverflowLevel::kCritical);
  // Norm is not an anomaly; parameters are never inspected.
  EXPECT_EQ(Overflow(R"({"input_args": [)" + Tensor("[2]", "1.0", "0.0", "0.5", "NaN") + R"(], "parameters": {"w": )" +
                     kNanOut + R"(}, "output": [)" + kT + "]}"),
            OverflowLevel::kNone);
  // A statistic written as the string "inf" counts (str(v).lower()).
  EXPECT_EQ(
      Overflow(R"({"input_args": [)" + kT + R"(], "output": [)" + Tensor("[2]", "\"Inf\"", "0.0", "0.5", "1.0") + "]}"),
      OverflowLevel::kCritical);
}

// §7 scene 4: the output norm jumps more than 100 times the input norm.
TEST_F(DumpReaderTest, OverflowNumericalMutation) {
  auto norm = [](const char* n) { return Tensor("[2]", "1.0", "0.0", "0.5", n); };
  EXPECT_EQ(
      Overflow(R"({"input_args": [)" + norm("2.0") + ", " + norm("0.5") + R"(], "output": [)" + norm("200.5") + "]}"),
      OverflowLevel::kHigh);
  EXPECT_EQ(Overflow(R"({"input_args": [)" + norm("2.0") + R"(], "output": [)" + norm("200.0") + "]}"),
            OverflowLevel::kNone)
      << "exactly 100 times is not more than 100";
  EXPECT_EQ(Overflow(R"({"input_args": [)" + norm("0.0") + R"(], "output": [)" + norm("100.5") + "]}"),
            OverflowLevel::kHigh);
  EXPECT_EQ(Overflow(R"({"input_args": [)" + norm("0.0") + R"(], "output": [)" + norm("99.0") + "]}"),
            OverflowLevel::kNone);
  EXPECT_EQ(Overflow(R"({"input_args": [], "input_kwargs": {"x": )" + norm("1.0") + R"(}, "output": [)" +
                     norm("101.0") + "]}"),
            OverflowLevel::kHigh);
  // Only top-level torch tensors count: nested ones and mindspore tensors do not.
  EXPECT_EQ(Overflow(R"({"input_args": [[)" + norm("1.0") + R"(]], "output": [)" + norm("500.0") + "]}"),
            OverflowLevel::kNone);
  const std::string ms = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2], "Max": 1.0, "Min": 0.0,
                             "Mean": 0.5, "Norm": )";
  EXPECT_EQ(Overflow(R"({"input_args": [)" + ms + R"(1.0}], "output": [)" + ms + "500.0}]}"), OverflowLevel::kNone);
}

// §7 step 4: msprobe's false-positive rules.
TEST_F(DumpReaderTest, OverflowIgnoreRules) {
  EXPECT_EQ(OverflowOf("Torch.empty.0.forward", R"({"input_args": [], "output": [)" + kNanOut + "]}"),
            OverflowLevel::kNone);
  EXPECT_EQ(OverflowOf("Torch.empty_like.2.forward", R"({"input_args": [)" + kT + R"(], "output": [)" + kNanOut + "]}"),
            OverflowLevel::kNone);
  // An anomalous element the rule does not list keeps the level.
  EXPECT_EQ(OverflowOf("Torch.empty.0.forward", R"({"input_args": [], "output": [)" + kT + ", " + kNanOut + "]}"),
            OverflowLevel::kCritical);
  EXPECT_EQ(OverflowOf("Distributed.recv.0.forward", R"({"input_args": [)" + kNanOut + R"(], "output": [)" + kT + "]}"),
            OverflowLevel::kNone);
  EXPECT_EQ(OverflowOf("Distributed.recv.0.forward",
                       R"({"input_args": [], "input_kwargs": {"tensor": )" + kNanOut + R"(}, "output": [)" + kT + "]}"),
            OverflowLevel::kNone);
  EXPECT_EQ(OverflowOf("Distributed.recv.0.forward",
                       R"({"input_args": [], "input_kwargs": {"other": )" + kNanOut + R"(}, "output": [)" + kT + "]}"),
            OverflowLevel::kMedium);
  EXPECT_EQ(
      OverflowOf("Tensor.masked_fill_.0.forward", R"({"input_args": [)" + kNanOut + R"(], "output": [)" + kT + "]}"),
      OverflowLevel::kNone);
  // The rule key is the first two segments, lower-cased: "Torch.emptyX" has no rule.
  EXPECT_EQ(OverflowOf("Torch.empty_x.0.forward", R"({"input_args": [], "output": [)" + kNanOut + "]}"),
            OverflowLevel::kCritical);
}

TEST_F(DumpReaderTest, OverflowIsNotComputedWithoutTheFlag) {
  Read(DumpJson(R"("E": {"input_args": [)" + kT + R"(], "output": [)" + kNanOut + "]}"), false);
  EXPECT_EQ(Entry("E").overflow, OverflowLevel::kNone);
}

// Bad input: the message names the file and the place.

TEST_F(DumpReaderTest, MissingFile) {
  auto r = ReadDumpJson(dir_ / "absent.json", &pool_, DumpOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, dir_ / "absent.json");
  EXPECT_NE(r.error().message.find("cannot open"), std::string::npos) << r.error().message;
}

TEST_F(DumpReaderTest, DirectoryInsteadOfFile) {
  std::filesystem::create_directories(dir_ / "dump.json");
  auto r = ReadDumpJson(dir_ / "dump.json", &pool_, DumpOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("directory"), std::string::npos) << r.error().message;
}

TEST_F(DumpReaderTest, EmptyFile) {
  Error e = ReadError(" \n");
  EXPECT_EQ(e.file, dir_ / "dump.json");
  EXPECT_NE(e.message.find("empty"), std::string::npos) << e.message;
}

TEST_F(DumpReaderTest, TruncatedFileNamesTheLine) {
  std::string full = DumpJson("\n\"A.x.0.forward\": {\"output\": [\n" + kT + "\n]}");
  Error e = ReadError(full.substr(0, full.size() - 6));
  EXPECT_EQ(e.file, dir_ / "dump.json");
  EXPECT_NE(e.where.find("line 3"), std::string::npos) << e.where;
  EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;
}

TEST_F(DumpReaderTest, WrongValueTypes) {
  EXPECT_NE(ReadError("[]").message.find("must be a JSON object"), std::string::npos);
  EXPECT_NE(ReadError(R"({"task": "statistics"})").message.find("no \"data\""), std::string::npos);
  Error data_list = ReadError(R"({"task": "statistics", "data": []})");
  EXPECT_NE(data_list.message.find("key data"), std::string::npos) << data_list.message;
  EXPECT_EQ(data_list.where, "line 1, column 32 (byte 31)");
  Error entry = ReadError(R"({"task": "statistics", "data": {"A.x.0.forward": 3}})");
  EXPECT_NE(entry.message.find("key data.A.x.0.forward"), std::string::npos) << entry.message;
  Error task = ReadError(R"({"task": 3, "data": {}})");
  EXPECT_NE(task.message.find("key task"), std::string::npos) << task.message;
}

TEST_F(DumpReaderTest, NestingBeyondMsprobesLimit) {
  std::string deep = std::string(450, '[') + kT + std::string(450, ']');
  Error e = ReadError(DumpJson(R"("A.x.0.forward": {"input_args": )" + deep + "}"));
  EXPECT_NE(e.message.find("nested deeper than 400"), std::string::npos) << e.message;
}

// A leaf read again (the same bytes as one before) gives what reading it
// anew gives, wherever it is: another traversal name, category or depth,
// a data_name, md5, non-finite statistics. The second dump differs only by
// a space before each leaf's closing brace, so that no leaf repeats.
TEST_F(DumpReaderTest, LeavesReadAgainAreReadTheSame) {
  auto dump = [](bool unique) {
    int n = 0;
    auto leaf = [&](const std::string& body) { return "{" + body + std::string(unique ? ++n : 0, ' ') + "}"; };
    const std::string t = R"("type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 4], "Max": 1.5,)"
                          R"( "Min": -0.5, "Mean": 0.25, "Norm": 3.0, "requires_grad": true)";
    const std::string md5 = t + R"(, "md5": "0d968558")";
    const std::string nan = R"("type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": NaN,)"
                            R"( "Min": 0.0, "Mean": NaN, "Norm": 1.0, "requires_grad": false)";
    const std::string named = t + R"(, "data_name": "A.0.forward.input.0.pt")";
    const std::string p2p = R"("class_type": "torch.distributed.P2POp", "op": "isend", "peer": 1, "group_id": "5a")";
    return DumpJson(R"("A.0.forward": {"input_args": [)" + leaf(t) + ", " + leaf(t) + ", [" + leaf(t) + ", [" +
                    leaf(md5) + "]], " + leaf(named) + ", " + leaf(named) + R"(], "input_kwargs": {"k": )" + leaf(t) +
                    R"(}, "output": [)" + leaf(md5) + ", " + leaf(nan) + R"(], "parameters": {"w": )" + leaf(t) +
                    R"(}}, "C.0.forward": {"output": [[)" + leaf(md5) + R"(]]}, "B.0.forward": {"input_args": [)" +
                    leaf(nan) + R"(], "output": [)" + leaf(t) + R"(]}, "B.0.backward": {"input": [)" + leaf(md5) +
                    R"(], "output": [[)" + leaf(md5) + R"(]]}, "M.parameters_grad": {"weight": )" + leaf(t) +
                    R"(}, "Distributed.batch_isend_irecv.0.forward": {"output": [[)" + leaf(p2p) + ", " + leaf(p2p) +
                    "]]}");
  };
  auto describe = [&](bool unique) {
    StringPool pool;
    WriteFile(dir_ / "dump.json", dump(unique));
    DumpOptions options;
    options.overflow_check = true;
    auto r = ReadDumpJson(dir_ / "dump.json", &pool, options);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    if (!r.ok()) return std::string();
    std::string out = "md5=" + std::to_string(r->summary_md5) + " fw=" + r->detected_framework + "\n";
    for (const DumpEntry& e : r->entries) {
      out += std::string(pool.Get(e.name)) + " in=" + std::to_string(e.input_count) +
             " out=" + std::to_string(e.output_count) + " p2p=" + std::to_string(e.p2p_count) +
             " overflow=" + std::to_string(static_cast<int>(e.overflow)) + " md5=" + std::to_string(e.has_md5) + "\n";
      for (uint32_t i = e.first_item; i < e.first_item + e.input_count + e.output_count; ++i) {
        const DumpItem& item = r->items[i];
        out += " " + std::string(pool.Get(item.key)) + " " + std::to_string(static_cast<int>(item.state)) + " " +
               std::to_string(item.flags) + ":";
        for (uint32_t f = item.first_field; f < item.first_field + item.field_count; ++f) {
          out += " " + std::string(pool.Get(r->fields[f].name)) + "=" + ValueText(pool, r->fields[f].value);
        }
        out += "\n";
      }
      for (uint32_t i = e.first_p2p; i < e.first_p2p + e.p2p_count; ++i) {
        out += " p2p " + std::string(pool.Get(r->p2p[i].op)) + " " + std::to_string(r->p2p[i].peer) + "\n";
      }
    }
    for (uint32_t id = 0; id < pool.size(); ++id) out += std::string(pool.Get(id)) + "|";
    return out;
  };
  std::string again = describe(false);
  EXPECT_EQ(again, describe(true));
  EXPECT_NE(again.find("A.0.forward in=6 out=2 p2p=0 overflow=3 md5=1"), std::string::npos) << again;
  EXPECT_NE(again.find("B.0.forward in=1 out=1 p2p=0 overflow=1 md5=0"), std::string::npos) << again;
  EXPECT_NE(again.find(" .input.2.1.0 0 0: "), std::string::npos) << again;
  EXPECT_NE(again.find("C.0.forward in=0 out=1 p2p=0 overflow=0 md5=0"), std::string::npos) << again;
}

// construct.json (§3.3).

class ConstructReaderTest : public ::testing::Test {
 protected:
  Result<ConstructData> Read(const std::string& text) {
    WriteFile(dir_ / "construct.json", text);
    return ReadConstructJson(dir_ / "construct.json", &pool_);
  }
  std::string Name(uint32_t id) { return std::string(pool_.Get(id)); }

  TempDir dir_;
  StringPool pool_;
};

TEST_F(ConstructReaderTest, ChildToParentInFileOrder) {
  auto c = Read(R"({"Module.a.A.forward.0": null, "Torch.add.0.forward": "Module.a.A.forward.0",
                    "Module.b.B.forward.0": "", "Tensor.mul.0.forward": "Module.c.C.forward.0"})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  ASSERT_EQ(c->edges.size(), 4u);
  EXPECT_EQ(Name(c->edges[0].child), "Module.a.A.forward.0");
  EXPECT_EQ(c->edges[0].parent, 0u) << "null parent";
  EXPECT_EQ(Name(c->edges[1].parent), "Module.a.A.forward.0");
  EXPECT_EQ(c->edges[2].parent, 0u) << "\"\" parent";
  EXPECT_EQ(c->edges[1].micro_step, -1);
  EXPECT_TRUE(c->IsKey(pool_.Intern("Torch.add.0.forward")));
  EXPECT_FALSE(c->IsKey(pool_.Intern("Module.c.C.forward.0"))) << "a parent that is never a key";
}

TEST_F(ConstructReaderTest, RepeatedKeyLastValueFirstPosition) {
  auto c = Read(R"({"A": "P", "B": null, "A": "Q"})");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->edges.size(), 2u);
  EXPECT_EQ(Name(c->edges[0].child), "A");
  EXPECT_EQ(Name(c->edges[0].parent), "Q");
}

TEST_F(ConstructReaderTest, MegatronMicroStepVariant) {
  auto c = Read(R"({"megatron_micro_step_number": 2, "Module.m.M.forward.0": [null, 0],
                    "Module.m.M.forward.1": ["Module.p.P.forward.0", 1]})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  ASSERT_EQ(c->edges.size(), 2u);
  EXPECT_EQ(c->edges[0].parent, 0u);
  EXPECT_EQ(c->edges[0].micro_step, 0);
  EXPECT_EQ(Name(c->edges[1].parent), "Module.p.P.forward.0");
  EXPECT_EQ(c->edges[1].micro_step, 1);
}

// json.dump's `"child": "parent"` lines are read in one pass; every other
// member (the first, Megatron pairs, the micro step count, escapes, other
// types) by the general path, with the same strings interned in the same
// order and the same errors at the same places.
TEST_F(ConstructReaderTest, LinesOfEveryShapeInOneFile) {
  auto c = Read(
      "{\n \"A\": null,\n \"B\": \"A\",\n \"C\": \"A\",\n \"megatron_micro_step_number\": 3,\n"
      " \"D\": [\"C\", 2],\n \"E\": \"C\",\n \"F\\u0041\": \"E\",\n \"G\": \"caf\u00e9\",\n"
      " \"H\": [],\n \"I\": \"\",\n \"J\": \"E\",\n \"B\": \"J\"\n}");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  std::vector<std::string> got;
  for (const ConstructData::Edge& e : c->edges) {
    got.push_back(Name(e.child) + "<-" + Name(e.parent) + "/" + std::to_string(e.micro_step));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"A<-/-1", "B<-J/-1", "C<-A/-1", "D<-C/2", "E<-C/-1", "FA<-E/-1",
                                           "G<-caf\u00e9/-1", "H<-/-1", "I<-/-1", "J<-E/-1"}));
  std::vector<std::string> pool;
  for (uint32_t id = 1; id < pool_.size(); ++id) pool.emplace_back(pool_.Get(id));
  EXPECT_EQ(pool, (std::vector<std::string>{"A", "B", "C", "D", "E", "FA", "G", "caf\u00e9", "H", "I", "J"}))
      << "interned as the general path does: each key, then its parent";
}

TEST_F(ConstructReaderTest, ErrorsAfterLinesReadInOnePass) {
  auto number = Read("{\n \"A\": null,\n \"B\": \"A\",\n \"C\": 5\n}");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error().where, "line 4, column 7 (byte 31)");
  EXPECT_EQ(number.error().message, "key C: the parent must be a string or null");
  auto pair = Read("{\n \"A\": null,\n \"B\": \"A\",\n \"C\": [1, 2]\n}");
  ASSERT_FALSE(pair.ok());
  EXPECT_EQ(pair.error().where, "line 4, column 8 (byte 32)");
  EXPECT_EQ(pair.error().message, "key C: expected [parent, micro_step]");
  auto truncated = Read("{\n \"A\": null,\n \"B\": \"A\",\n \"C\": \"A");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos) << truncated.error().message;
  auto comma = Read("{\n \"A\": null,\n \"B\": \"A\"\n \"C\": \"A\"\n}");
  ASSERT_FALSE(comma.ok());
  EXPECT_NE(comma.error().where.find("line 4"), std::string::npos) << comma.error().where;
}

TEST_F(ConstructReaderTest, EmptyObjectIsAnEmptyHierarchy) {
  auto c = Read("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->edges.empty());
}

TEST_F(ConstructReaderTest, Errors) {
  auto number = Read("{\n\"A\": null,\n\"B\": 5}");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error().file, dir_ / "construct.json");
  EXPECT_EQ(number.error().where, "line 3, column 6 (byte 18)");
  EXPECT_NE(number.error().message.find("key B"), std::string::npos) << number.error().message;

  auto list = Read(R"(["A"])");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("must be a JSON object"), std::string::npos);

  auto empty = Read("");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);

  auto truncated = Read(R"({"A": "P", "B": "Q)");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
}

// stack.json (§3.4), both formats.

class StackReaderTest : public ::testing::Test {
 protected:
  Result<StackData> Read(const std::string& text) {
    WriteFile(dir_ / "stack.json", text);
    return ReadStackJson(dir_ / "stack.json", &pool_);
  }
  std::vector<std::string> Lines(const StackData& s, const std::string& name) {
    const StackData::Range* r = s.Find(pool_.Intern(name));
    if (r == nullptr) return {"<none>"};
    std::vector<std::string> out;
    for (uint32_t i = 0; i < r->count; ++i) out.emplace_back(pool_.Get(s.lines[r->first + i]));
    return out;
  }

  TempDir dir_;
  StringPool pool_;
};

TEST_F(StackReaderTest, NameToFrames) {
  auto s = Read(R"({"Torch.add.0.forward": ["File a.py, line 1, in f, \n x", "File b.py, line 2, in g, \n y"],
                    "Module.m.M.forward.0": [], "Bad.entry": "not a list"})");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(Lines(*s, "Torch.add.0.forward"),
            (std::vector<std::string>{"File a.py, line 1, in f, \n x", "File b.py, line 2, in g, \n y"}));
  EXPECT_TRUE(Lines(*s, "Module.m.M.forward.0").empty());
  EXPECT_EQ(Lines(*s, "Bad.entry"), std::vector<std::string>{"<none>"});
}

TEST_F(StackReaderTest, GroupedFormat) {
  auto s = Read(R"({"0": [["Torch.add.0.forward", "Torch.add.1.forward"], ["L1", "L2"]],
                    "1": [["Module.m.M.forward.0"], ["L3"]],
                    "2": [["Skipped.one"]],
                    "3": ["Skipped.two", ["L4"]],
                    "4": [["Skipped.three"], ["L5"], ["extra"]]})");
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(Lines(*s, "Torch.add.0.forward"), (std::vector<std::string>{"L1", "L2"}));
  EXPECT_EQ(Lines(*s, "Torch.add.1.forward"), (std::vector<std::string>{"L1", "L2"}));
  EXPECT_EQ(s->Find(pool_.Intern("Torch.add.0.forward")), s->Find(pool_.Intern("Torch.add.1.forward")))
      << "one stored stack for the group";
  EXPECT_EQ(Lines(*s, "Module.m.M.forward.0"), std::vector<std::string>{"L3"});
  EXPECT_EQ(Lines(*s, "Skipped.one"), std::vector<std::string>{"<none>"});
  EXPECT_EQ(Lines(*s, "Skipped.three"), std::vector<std::string>{"<none>"});
  EXPECT_EQ(s->Find(pool_.Intern("0")), nullptr) << "group keys are not names";
}

TEST_F(StackReaderTest, Errors) {
  auto list = Read("[]");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().file, dir_ / "stack.json");
  EXPECT_NE(list.error().message.find("must be a JSON object"), std::string::npos);
  auto bad = Read("{\"0\": [[\"a\"], [\"L\"]],\n \"1\": [[\"b\"] [\"L\"]]}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().where.find("line 2"), std::string::npos) << bad.error().where;
}

}  // namespace
}  // namespace graph_ascend::dump
