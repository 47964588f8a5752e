#include "model/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <stdexcept>

#include "util/file_io.h"
#include "model/folded_net.h"

namespace oppidum::model {
namespace {

// The game's input planes and action layout in words (Game::planes_description and
// actions_description); a checkpoint of another encoding version than this build's is refused.
struct EncodingText {
  std::string planes;
  std::string actions;
};

EncodingText encoding_text(const Checkpoint& c, const std::string& source) {
  const Game* game = nullptr;
  for (const Game* g : all_games())
    if (g->name() == c.game) game = g;
  if (game == nullptr || game->encoding_version() != c.encoding_version)
    throw CheckpointError(source + ": cannot export a network for game '" + c.game +
                          "' with encoding version " + std::to_string(c.encoding_version) +
                          ": this build describes " +
                          (game ? c.game + " encoding version " +
                                      std::to_string(game->encoding_version())
                                : "the games " + game_names(", ")));
  return {game->planes_description(), game->actions_description()};
}

// Adds initializers and nodes to a graph; every node is named after its output.
class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto* graph) : graph_(graph) {}

  std::string initializer(const std::string& name, const std::vector<std::int64_t>& dims,
                          const std::vector<float>& data) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : dims) t->add_dims(d);
    t->set_raw_data(data.data(), data.size() * sizeof(float));
    return name;
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
    return n;
  }

  std::string unary(const std::string& op, const std::string& x, const std::string& output) {
    node(op, {x}, output);
    return output;
  }

  std::string conv(const std::string& x, const FoldedConv& c, const std::string& name) {
    const std::string w =
        initializer(name + ".weight", {c.out, c.in, c.kernel, c.kernel}, c.weight);
    const std::string b = initializer(name + ".bias", {c.out}, c.bias);
    onnx::NodeProto* n = node("Conv", {x, w, b}, name);
    const std::int64_t pad = c.kernel / 2;
    ints(n, "kernel_shape", {c.kernel, c.kernel});
    ints(n, "pads", {pad, pad, pad, pad});
    ints(n, "strides", {1, 1});
    return name;
  }

  // y = x W^T + b for x [batch, in].
  std::string gemm(const std::string& x, const FoldedLinear& l, const std::string& name) {
    const std::string w = initializer(name + ".weight", {l.out, l.in}, l.weight);
    const std::string b = initializer(name + ".bias", {l.out}, l.bias);
    int_attribute(node("Gemm", {x, w, b}, name), "transB", 1);
    return name;
  }

  // The global pooling bias of a block: a 1x1 convolution over concat(mean, max) of `t`, whose
  // [filters, 2 * filters] weight is the FoldedLinear's.
  std::string pool_bias(const std::string& t, const FoldedLinear& l, const std::string& name) {
    const std::string mean = unary("GlobalAveragePool", t, name + ".mean");
    const std::string max = unary("GlobalMaxPool", t, name + ".max");
    int_attribute(node("Concat", {mean, max}, name + ".concat"), "axis", 1);
    FoldedConv as_conv;
    as_conv.out = l.out;
    as_conv.in = l.in;
    as_conv.kernel = 1;
    as_conv.weight = l.weight;
    as_conv.bias = l.bias;
    return conv(name + ".concat", as_conv, name);
  }

  void tensor_value(onnx::ValueInfoProto* v, const std::string& name,
                    const std::vector<std::int64_t>& dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    onnx::TensorShapeProto* shape = t->mutable_shape();
    shape->add_dim()->set_dim_param("batch");
    for (std::int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }

 private:
  static void int_attribute(onnx::NodeProto* n, const char* name, std::int64_t value) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }

  static void ints(onnx::NodeProto* n, const char* name, const std::vector<std::int64_t>& values) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t v : values) a->add_ints(v);
  }

  onnx::GraphProto* graph_;
};

void build_graph(const FoldedNet& net, onnx::GraphProto* graph) {
  GraphBuilder g(graph);
  g.tensor_value(graph->add_input(), kOnnxInput,
                 {net.input.planes, net.input.height, net.input.width});

  std::string x = g.unary("Relu", g.conv(kOnnxInput, net.stem, "stem.conv"), "stem.relu");
  for (std::size_t b = 0; b < net.blocks.size(); ++b) {
    const FoldedBlock& block = net.blocks[b];
    const std::string p = "blocks." + std::to_string(b);
    std::string t = g.unary("Relu", g.conv(x, block.conv1, p + ".conv1"), p + ".relu1");
    if (block.has_pool) {
      const std::string bias = g.pool_bias(t, block.pool, p + ".pool");
      g.node("Add", {t, bias}, p + ".pooled");
      t = p + ".pooled";
    }
    const std::string u = g.conv(t, block.conv2, p + ".conv2");
    g.node("Add", {x, u}, p + ".skip");
    x = g.unary("Relu", p + ".skip", p + ".relu2");
  }

  const std::string pol = g.unary("Relu", g.conv(x, net.policy_conv, "policy.conv"), "policy.relu");
  g.unary("Flatten", pol, "policy.flatten");  // axis 1 (the default): channel-major, as NCHW
  g.gemm("policy.flatten", net.policy_fc, kOnnxPolicyOutput);

  const std::string val = g.unary("Relu", g.conv(x, net.value_conv, "value.conv"), "value.relu");
  g.unary("Flatten", val, "value.flatten");
  const std::string hidden =
      g.unary("Relu", g.gemm("value.flatten", net.value_fc1, "value.fc1"), "value.hidden");
  g.unary("Tanh", g.gemm(hidden, net.value_fc2, "value.fc2"), kOnnxValueOutput);

  g.tensor_value(graph->add_output(), kOnnxPolicyOutput, {net.num_actions});
  g.tensor_value(graph->add_output(), kOnnxValueOutput, {1});
}

std::string shape_text(PlaneShape s) {
  return std::to_string(s.planes) + "," + std::to_string(s.height) + "," + std::to_string(s.width);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> onnx_metadata(const Checkpoint& c,
                                                               const std::string& source) {
  const EncodingText text = encoding_text(c, source);
  return {
      {"oppidum.game", c.game},
      {"oppidum.encoding_version", std::to_string(c.encoding_version)},
      {"oppidum.input_shape", shape_text(c.input)},
      {"oppidum.planes", text.planes},
      {"oppidum.num_actions", std::to_string(c.num_actions)},
      {"oppidum.actions", text.actions},
      {"oppidum.policy",
       "policy_logits [batch, " + std::to_string(c.num_actions) +
           "]: raw logits over every action, legal or not; keep the legal actions and take a "
           "softmax over them for move probabilities"},
      {"oppidum.value",
       "value [batch, 1]: expected result for the side to move, in [-1, 1] (tanh): +1 a win, "
       "-1 a loss, 0 a draw or an even position"},
      {"oppidum.network", c.config.to_string()},
      {"oppidum.training_step", std::to_string(c.step)},
      {"oppidum.checkpoint_metadata", c.metadata},
  };
}

std::string onnx_model_bytes(const Checkpoint& checkpoint, const std::string& source) {
  const auto metadata = onnx_metadata(checkpoint, source);
  const FoldedNet net = fold_batch_norm(checkpoint);

  onnx::ModelProto model;
  model.set_ir_version(kOnnxIrVersion);
  model.set_producer_name("oppidum");
  model.set_producer_version(OPPIDUM_VERSION);
  model.set_model_version(checkpoint.step);
  model.set_doc_string("oppidum " + checkpoint.game + " network " + checkpoint.config.to_string() +
                       " at training step " + std::to_string(checkpoint.step) +
                       "; input planes, actions and outputs are described in metadata_props");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  for (const auto& [key, value] : metadata) {
    onnx::StringStringEntryProto* p = model.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("oppidum_" + checkpoint.game);
  build_graph(net, graph);

  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::ShapeInferenceOptions strict;
    strict.check_type = true;
    strict.error_mode = 1;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    throw std::runtime_error(source +
                             ": the exported ONNX graph fails ONNX's checks (a bug in "
                             "oppidum's exporter): " +
                             e.what());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw std::runtime_error(source + ": cannot serialize the ONNX model");
  return bytes;
}

void export_onnx(const Checkpoint& checkpoint, const std::string& source, const std::string& path) {
  util::write_file_atomically(path, onnx_model_bytes(checkpoint, source));
}

}  // namespace oppidum::model
