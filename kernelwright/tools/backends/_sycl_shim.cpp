// kernelwright SYCL shim: a C ABI over the sycl_ext_oneapi_kernel_compiler extension.
//
// Built lazily by kernelwright.tools.backends._shim with plain g++ against the SYCL runtime
// headers of the Python environment, and loaded with ctypes. The shim makes the queue
// itself (kw_make_queue), so a process using it needs no Python package of the runtime (and
// so no numpy); kernels are sycl::kernel*, from a bundle built here from SYCL source or from
// an OpenCL C program built here through OpenCL interop.
//
// Every function catches all exceptions: errors come back as malloc'd text (kw_free_str).

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
// Only the headers the shim needs (not <sycl/sycl.hpp>): halves its one-time build.
#include <sycl/aspects.hpp>
#include <sycl/backend.hpp>
#include <sycl/backend/opencl.hpp>
#include <sycl/device.hpp>
#include <sycl/device_selector.hpp>
#include <sycl/event.hpp>
#include <sycl/ext/oneapi/experimental/enqueue_functions.hpp>
#include <sycl/handler.hpp>
#include <sycl/info/info_desc.hpp>
#include <sycl/kernel_bundle.hpp>
#include <sycl/properties/queue_properties.hpp>
#include <sycl/queue.hpp>
#include <sycl/usm.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace syclexp = sycl::ext::oneapi::experimental;

namespace {

using exe_bundle = sycl::kernel_bundle<sycl::bundle_state::executable>;

// An OpenCL C program built for a queue's device, with the context its kernels belong to.
struct opencl_program {
  cl_program program;
  sycl::context context;
};

char *dup(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

template <typename F> int guarded(char **err, F &&body) {
  try {
    body();
    return 0;
  } catch (const sycl::exception &e) {
    if (err) *err = dup(e.what());
  } catch (const std::exception &e) {
    if (err) *err = dup(e.what());
  } catch (...) {
    if (err) *err = dup("unknown C++ exception");
  }
  return 1;
}

// Scalars are set by width: the runtime copies the bytes, so a float travels as uint32.
void set_scalar(sycl::handler &h, int i, const void *value, size_t size) {
  switch (size) {
  case 1: h.set_arg(i, *static_cast<const uint8_t *>(value)); break;
  case 2: h.set_arg(i, *static_cast<const uint16_t *>(value)); break;
  case 4: h.set_arg(i, *static_cast<const uint32_t *>(value)); break;
  case 8: h.set_arg(i, *static_cast<const uint64_t *>(value)); break;
  default: throw std::runtime_error("argument " + std::to_string(i) + ": scalar of " +
                                    std::to_string(size) + " bytes (use 1, 2, 4 or 8)");
  }
}

template <int N>
sycl::event submit(sycl::queue &q, const sycl::kernel &k, int nargs, const int *kinds,
                   const void *const *values, const size_t *sizes, const size_t *global,
                   const size_t *local) {
  sycl::range<N> g, l;
  for (int d = 0; d < N; ++d) {
    g[d] = global[d];
    l[d] = local ? local[d] : 1;
  }
  return q.submit([&](sycl::handler &h) {
    for (int i = 0; i < nargs; ++i) {
      if (kinds[i] == 0)
        h.set_arg(i, *static_cast<void *const *>(values[i]));
      else
        set_scalar(h, i, values[i], sizes[i]);
    }
    if (local)
      h.parallel_for(sycl::nd_range<N>{g, l}, k);
    else
      h.parallel_for(g, k);
  });
}

syclexp::source_language to_language(int language) {
  return language == 1 ? syclexp::source_language::opencl : syclexp::source_language::sycl;
}

uint64_t elapsed_ns(const sycl::event &e) {
  try {
    auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
    auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
    return end > start ? end - start : 0;
  } catch (const sycl::exception &) {
    return 0;  // queue without profiling
  }
}

}  // namespace

extern "C" {

int kw_abi_version() { return 3; }

// An in-order, profiling queue on the first OpenCL CPU device (kw_free_queue), or nullptr
// with *err saying why.
void *kw_make_queue(char **err) {
  *err = nullptr;
  sycl::queue *queue = nullptr;
  guarded(err, [&] {
    auto opencl_cpu = [](const sycl::device &d) {
      return d.get_backend() == sycl::backend::opencl && d.is_cpu() ? 1 : -1;
    };
    queue = new sycl::queue(sycl::device(opencl_cpu),
                            sycl::property_list{sycl::property::queue::in_order(),
                                                sycl::property::queue::enable_profiling()});
  });
  return queue;
}

void kw_free_queue(void *queue_ptr) { delete static_cast<sycl::queue *>(queue_ptr); }

// A fact about the queue's device as malloc'd text: 0 its name, 1 its driver version,
// 2 "1" if it reads plain host memory (usm_system_allocations), else "0".
char *kw_device_info(void *queue_ptr, int what) {
  char *out = nullptr;
  guarded(&out, [&] {
    auto d = static_cast<sycl::queue *>(queue_ptr)->get_device();
    std::string text;
    if (what == 0) text = d.get_info<sycl::info::device::name>();
    else if (what == 1) text = d.get_info<sycl::info::device::driver_version>();
    else text = d.has(sycl::aspect::usm_system_allocations) ? "1" : "0";
    out = dup(text);
  });
  return out;
}

// Shared USM of `size` bytes on the queue's context (kw_free_usm), or nullptr.
void *kw_malloc_shared(void *queue_ptr, size_t size) {
  try {
    return sycl::malloc_shared(size, *static_cast<sycl::queue *>(queue_ptr));
  } catch (...) {
    return nullptr;
  }
}

void kw_free_usm(void *queue_ptr, void *ptr) {
  try {
    sycl::free(ptr, *static_cast<sycl::queue *>(queue_ptr));
  } catch (...) {
  }
}

// 1 if the queue's device can compile source of `language` (0 SYCL, 1 OpenCL C), else 0.
int kw_can_compile(void *queue_ptr, int language) {
  try {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    return q.get_device().ext_oneapi_can_compile(to_language(language)) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// Build source of `language` (0 SYCL, 1 OpenCL C) for the queue's device. On success *bundle is an opaque handle
// (kw_free_bundle); *log holds the compiler's log (warnings) or the error text on failure.
int kw_build(void *queue_ptr, int language, const char *source, const char *const *options, int n_options,
             void **bundle, char **log) {
  *bundle = nullptr;
  *log = nullptr;
  std::string build_log;
  int rc = guarded(log, [&] {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    auto src = syclexp::create_kernel_bundle_from_source(
        q.get_context(), to_language(language), std::string(source));
    std::vector<std::string> opts(options, options + n_options);
    exe_bundle exe = syclexp::build(
        src, {q.get_device()},
        syclexp::properties{syclexp::build_options{opts}, syclexp::save_log{&build_log}});
    *bundle = new exe_bundle(std::move(exe));
  });
  if (rc == 0 && !build_log.empty()) *log = dup(build_log);
  return rc;
}

// A sycl::kernel* for `name` in the bundle (kw_free_kernel), or nullptr if it has none.
void *kw_get_kernel(void *bundle, const char *name) {
  try {
    auto &b = *static_cast<exe_bundle *>(bundle);
    if (!b.ext_oneapi_has_kernel(name)) return nullptr;
    return new sycl::kernel(b.ext_oneapi_get_kernel(name));
  } catch (...) {
    return nullptr;
  }
}

// Number of arguments the kernel takes, or -1 if the runtime cannot say.
int kw_num_args(void *kernel) {
  try {
    return static_cast<int>(
        static_cast<sycl::kernel *>(kernel)->get_info<sycl::info::kernel::num_args>());
  } catch (...) {
    return -1;
  }
}

// Launch. kinds[i]: 0 = pointer (values[i] points at the void*), 1 = scalar of sizes[i]
// bytes. local may be null (the runtime picks). With wait, *ns gets the kernel's time from
// event profiling (0 if unavailable).
int kw_launch(void *queue_ptr, void *kernel, int nargs, const int *kinds,
              const void *const *values, const size_t *sizes, int ndim, const size_t *global,
              const size_t *local, int wait, uint64_t *ns, char **err) {
  *ns = 0;
  *err = nullptr;
  return guarded(err, [&] {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    auto &k = *static_cast<sycl::kernel *>(kernel);
    sycl::event e;
    if (ndim == 1) e = submit<1>(q, k, nargs, kinds, values, sizes, global, local);
    else if (ndim == 2) e = submit<2>(q, k, nargs, kinds, values, sizes, global, local);
    else if (ndim == 3) e = submit<3>(q, k, nargs, kinds, values, sizes, global, local);
    else throw std::runtime_error("ndim must be 1, 2 or 3");
    if (wait) {
      e.wait_and_throw();
      *ns = elapsed_ns(e);
    }
  });
}

// Launch a prepared chain of 1-D kernels in order, all arguments pointers: kernel i takes
// nargs[i] arguments, argument j of the chain is ptrs[argidx[j]] (the caller passes one
// pointer table per call; everything else was marshalled once). Submissions create no
// events (enqueue functions); with wait the call returns when the queue is idle.
int kw_launch_chain(void *queue_ptr, int nk, void *const *kernels, const int *nargs,
                    const int *argidx, const size_t *globals, const size_t *locals,
                    void *const *ptrs, int wait, char **err) {
  *err = nullptr;
  return guarded(err, [&] {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    int off = 0;
    for (int i = 0; i < nk; ++i) {
      auto &k = *static_cast<sycl::kernel *>(kernels[i]);
      const int n = nargs[i], base = off;
      sycl::nd_range<1> range{sycl::range<1>{globals[i]}, sycl::range<1>{locals[i]}};
      syclexp::submit(q, [&](sycl::handler &h) {
        for (int a = 0; a < n; ++a) h.set_arg(a, ptrs[argidx[base + a]]);
        h.parallel_for(range, k);
      });
      off += n;
    }
    if (wait) q.wait_and_throw();
  });
}

int kw_wait(void *queue_ptr, char **err) {
  *err = nullptr;
  return guarded(err, [&] { static_cast<sycl::queue *>(queue_ptr)->wait_and_throw(); });
}

// Build OpenCL C for the queue's device. On success *program is an opaque handle
// (kw_free_program) and the result 0; otherwise *log holds the compiler's log or the error.
int kw_build_opencl(void *queue_ptr, const char *source, const char *options, void **program,
                    char **log) {
  *program = nullptr;
  *log = nullptr;
  cl_int status = CL_SUCCESS;
  int rc = guarded(log, [&] {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    cl_context ctx = sycl::get_native<sycl::backend::opencl>(q.get_context());
    cl_device_id dev = sycl::get_native<sycl::backend::opencl>(q.get_device());
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, nullptr, &status);
    if (status == CL_SUCCESS) {
      status = clBuildProgram(prog, 1, &dev, options, nullptr, nullptr);
      if (status == CL_SUCCESS) {
        *program = new opencl_program{prog, q.get_context()};
      } else {
        size_t size = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
        std::string text(size, '\0');
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, size, text.data(), nullptr);
        *log = dup("OpenCL build failed (status " + std::to_string(status) + "): " +
                   text.c_str());
        clReleaseProgram(prog);
      }
    } else {
      *log = dup("clCreateProgramWithSource failed (status " + std::to_string(status) + ")");
    }
    clReleaseContext(ctx);
    clReleaseDevice(dev);
  });
  return rc != 0 ? 1 : (*program ? 0 : 1);
}

// A sycl::kernel* for `name` in an OpenCL program (kw_free_kernel), or nullptr if it has none.
void *kw_opencl_kernel(void *program, const char *name) {
  try {
    auto &p = *static_cast<opencl_program *>(program);
    cl_int status = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p.program, name, &status);
    if (status != CL_SUCCESS) return nullptr;
    auto *out = new sycl::kernel(sycl::make_kernel<sycl::backend::opencl>(k, p.context));
    clReleaseKernel(k);  // the SYCL kernel holds its own reference
    return out;
  } catch (...) {
    return nullptr;
  }
}

// The device binary of a built bundle (one OpenCL program for the queue's one device) in
// *binary (malloc'd, *size bytes; kw_free_str), and the OpenCL name of each of its `n`
// kernels `names` in *cl_names, one per line. kw_load_binary makes a program from them
// again without the kernel compiler (which preprocesses the whole source even on a hit).
int kw_bundle_binary(void *bundle, const char *const *names, int n, void **binary,
                     size_t *size, char **cl_names, char **err) {
  *binary = nullptr;
  *size = 0;
  *cl_names = nullptr;
  *err = nullptr;
  return guarded(err, [&] {
    auto &b = *static_cast<exe_bundle *>(bundle);
    std::vector<cl_program> programs = sycl::get_native<sycl::backend::opencl>(b);
    struct release {
      std::vector<cl_program> &p;
      ~release() { for (cl_program x : p) clReleaseProgram(x); }
    } guard{programs};
    if (programs.size() != 1)
      throw std::runtime_error("the bundle holds " + std::to_string(programs.size()) +
                               " programs, not one");
    cl_uint devices = 0;
    clGetProgramInfo(programs[0], CL_PROGRAM_NUM_DEVICES, sizeof(devices), &devices, nullptr);
    if (devices != 1) throw std::runtime_error("the program is built for several devices");
    size_t bytes = 0;
    if (clGetProgramInfo(programs[0], CL_PROGRAM_BINARY_SIZES, sizeof(bytes), &bytes,
                         nullptr) != CL_SUCCESS || bytes == 0)
      throw std::runtime_error("the program has no device binary");
    auto *out = static_cast<unsigned char *>(std::malloc(bytes));
    if (!out) throw std::bad_alloc();
    unsigned char *outs[1] = {out};
    if (clGetProgramInfo(programs[0], CL_PROGRAM_BINARIES, sizeof(outs), outs, nullptr) !=
        CL_SUCCESS) {
      std::free(out);
      throw std::runtime_error("clGetProgramInfo(CL_PROGRAM_BINARIES) failed");
    }
    std::string joined;
    for (int i = 0; i < n; ++i) {
      cl_kernel k = sycl::get_native<sycl::backend::opencl>(b.ext_oneapi_get_kernel(names[i]));
      size_t length = 0;
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &length);
      std::string name(length, '\0');
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, length, name.data(), nullptr);
      clReleaseKernel(k);
      joined += name.c_str();
      joined += '\n';
    }
    *binary = out;
    *size = bytes;
    *cl_names = dup(joined);
  });
}

// A program from a device binary of kw_bundle_binary, built for the queue's device (its
// kernels through kw_opencl_kernel). 0 and *program (kw_free_program) on success; else 1 and
// *log says why (a binary of another device or driver is refused here).
int kw_load_binary(void *queue_ptr, const unsigned char *binary, size_t size, void **program,
                   char **log) {
  *program = nullptr;
  *log = nullptr;
  int rc = guarded(log, [&] {
    auto &q = *static_cast<sycl::queue *>(queue_ptr);
    cl_context ctx = sycl::get_native<sycl::backend::opencl>(q.get_context());
    cl_device_id dev = sycl::get_native<sycl::backend::opencl>(q.get_device());
    cl_int status = CL_SUCCESS, binary_status = CL_SUCCESS;
    cl_program prog = clCreateProgramWithBinary(ctx, 1, &dev, &size, &binary, &binary_status,
                                                &status);
    if (status == CL_SUCCESS && binary_status == CL_SUCCESS) {
      status = clBuildProgram(prog, 1, &dev, "", nullptr, nullptr);
      if (status == CL_SUCCESS) *program = new opencl_program{prog, q.get_context()};
      else clReleaseProgram(prog);
    }
    if (!*program)
      *log = dup("the device binary was refused (status " + std::to_string(status) + ", " +
                 std::to_string(binary_status) + ")");
    clReleaseContext(ctx);
    clReleaseDevice(dev);
  });
  return rc != 0 ? 1 : (*program ? 0 : 1);
}

void kw_free_program(void *program) {
  auto *p = static_cast<opencl_program *>(program);
  if (p) clReleaseProgram(p->program);
  delete p;
}

void kw_free_kernel(void *kernel) { delete static_cast<sycl::kernel *>(kernel); }
void kw_free_bundle(void *bundle) { delete static_cast<exe_bundle *>(bundle); }
void kw_free_str(char *s) { std::free(s); }

}  // extern "C"
