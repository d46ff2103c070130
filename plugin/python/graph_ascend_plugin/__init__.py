"""The GRAPH_ASCEND TensorBoard plugin: a thin forwarder to graph-ascend-server."""
