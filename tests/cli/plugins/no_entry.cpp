// A shared library that is not a cubesim plugin: it lacks CUBESIM_PLUGIN.
extern "C" int not_a_cubesim_plugin() {
  return 1;
}
