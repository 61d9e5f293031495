// A library for shared_library_test.cpp to find (or not) by directory.
extern "C" int nodeprobe_dummy_library_answer() { return 42; }
