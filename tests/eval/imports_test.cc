// The built library's linkage against the allow-list: the refusals by name, the allow-list,
// the needed libraries, and the ELF reader on a real library.
#include "eval/imports.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/error.h"

#include "support/test_paths.h"

namespace mgk::eval {
namespace {

std::string refusal(std::vector<std::string> imports, std::vector<std::string> needed = {"libcudart.so.13", "libc.so.6"}) {
  auto v = check_imports({needed, imports, {"mgk_setup", "mgk_run", "mgk_teardown"}});
  return v ? v->symbol + ": " + v->why : "";
}

TEST(Imports, WhatAKernelCallsPasses) {
  EXPECT_EQ(refusal({"cudaMalloc", "cudaLaunchKernel", "__cudaRegisterFatBinary", "__cudaPushCallConfiguration",
                     "cublasLtMatmul", "cuMemMap", "memcpy", "printf", "__printf_chk", "malloc", "free", "sqrtf",
                     "_Znwm", "_ZdlPvm", "__cxa_atexit", "__gxx_personality_v0", "_Unwind_Resume", "__stack_chk_fail",
                     "getenv", "stderr", "fwrite"}),
            "");
}

TEST(Imports, EachRefusalSaysWhy) {
  EXPECT_EQ(refusal({"dlopen"}), "dlopen: candidates may not load or look up code at run time");
  EXPECT_EQ(refusal({"cuGetProcAddress_v2"}), "cuGetProcAddress_v2: candidates may not load or look up code at run time");
  EXPECT_EQ(refusal({"cudaGetDriverEntryPointByVersion"}),
            "cudaGetDriverEntryPointByVersion: candidates may not load or look up code at run time");
  EXPECT_EQ(refusal({"cuModuleLoadData"}), "cuModuleLoadData: candidates may not load or look up code at run time");
  EXPECT_EQ(refusal({"ncclAllReduce"}), "ncclAllReduce: candidates may not call NCCL: the task is to replace it");
  EXPECT_EQ(refusal({"cuMulticastCreate"}), "cuMulticastCreate: NVLink multicast (multimem PTX, cuMulticast*) is off on these machines and must stay off");
  EXPECT_EQ(refusal({"fork"}), "fork: candidates may not start processes");
  EXPECT_EQ(refusal({"posix_spawn"}), "posix_spawn: candidates may not start processes");
  EXPECT_EQ(refusal({"pthread_create"}), "pthread_create: candidates may not start threads");
  EXPECT_EQ(refusal({"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE"}).substr(0, 12),
            "_ZNSt6thread");
  EXPECT_EQ(refusal({"syscall"}), "syscall: candidates may not make raw system calls");
  EXPECT_EQ(refusal({"mprotect"}), "mprotect: candidates may not map memory or change its protection");
  EXPECT_EQ(refusal({"socket"}), "socket: candidates may not use sockets");
  EXPECT_EQ(refusal({"ptrace"}), "ptrace: candidates may not control processes or the system");
  EXPECT_EQ(refusal({"cudaDeviceReset"}), "cudaDeviceReset: resetting the device destroys the harness's state");
  // The runtime's and driver's tables of undocumented entry points lead to any function.
  EXPECT_EQ(refusal({"cudaGetExportTable"}), "cudaGetExportTable: candidates may not load or look up code at run time");
  EXPECT_EQ(refusal({"cuGetExportTable"}), "cuGetExportTable: candidates may not load or look up code at run time");
}

TEST(Imports, OfLibstdcxxFilesAndThreadsAreRefusedStringsAndPrintingAreNot) {
  EXPECT_EQ(refusal({"_ZNSt10filesystem6statusERKNS_7__cxx114pathE"}),
            "_ZNSt10filesystem6statusERKNS_7__cxx114pathE: candidates may not use the file system");
  EXPECT_EQ(refusal({"_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode"}),
            "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode: candidates may not use the file system");
  EXPECT_EQ(refusal({"_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode"}).substr(0, 20),
            "_ZNSt13basic_filebuf");
  EXPECT_NE(refusal({"_ZNSt6thread4joinEv"}), "");
  EXPECT_EQ(refusal({"_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEC1Ev", "_ZSt4cout", "_ZNSolsEi",
                     "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
                     "_ZNSt8ios_base4InitC1Ev", "_ZSt20__throw_length_errorPKc"}),
            "");
}

std::string shadowing(std::vector<DefinedName> defined) {
  ElfLinkage l;
  l.defined = std::move(defined);
  auto v = shadowed_name(l);
  return v ? v->symbol + ": " + v->why : "";
}

TEST(Imports, ANameOfALibraryItRunsBesideMayNotBeDefined) {
  EXPECT_EQ(shadowing({{"cudaEventElapsedTime", true}}),
            "cudaEventElapsedTime: the library defines a name of the CUDA libraries: candidates may not replace the "
            "functions of the libraries they call");
  EXPECT_NE(shadowing({{"cuLaunchKernel", false}}), "");
  EXPECT_NE(shadowing({{"ncclAllReduce", true}}), "");
  EXPECT_EQ(shadowing({{"malloc", false}}).substr(0, 46), "malloc: the library defines a name of the C li");
  EXPECT_NE(shadowing({{"clock_gettime", true}}), "");
  EXPECT_NE(shadowing({{"_Znwm", false}}), "") << "operator new";
  EXPECT_NE(shadowing({{"_ZSt9terminatev", true}}), "") << "a strong definition of libstdc++'s";
}

TEST(Imports, WhatACandidateDefinesOfItsOwnIsItsOwn) {
  EXPECT_EQ(shadowing({{"mgk_setup", true}, {"mgk_run", true}, {"mgk_teardown", true}, {"_Z6kernelPfi", true},
                       {"_ZN3mgk9set_errorEP7mgk_ctxPKcz", false}, {"_ZN3mgk7kDTypesE", false},
                       // libstdc++'s templates, emitted weak by every user of them
                       {"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_", false},
                       {"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE12_M_constructIPKcEEvT_S8_St20forward_iterator_tag", false}}),
            "");
}

TEST(Imports, AnythingElseIsOffTheList) {
  EXPECT_EQ(refusal({"fopen"}),
            "fopen: not on the list of what a candidate may call: candidates may link and call only the CUDA runtime "
            "and driver, cuBLAS, cuBLASLt, cuFFT and the basics of libc, libm and libstdc++");
  EXPECT_EQ(refusal({"cufftPlanMany", "cufftExecC2C", "cublasLtMatmul"}), "") << "the linked libraries' calls are allowed";
  // cuFFT's JIT callbacks link code given as bytes at run time, which no check of the
  // candidate's PTX sees.
  EXPECT_NE(refusal({"cufftXtSetJITCallback"}), "");
  EXPECT_NE(refusal({"open64"}), "");
  EXPECT_NE(refusal({"write"}), "") << "the socket to the harness is an fd: raw writes are refused";
}

TEST(Imports, OnlyTheRuntimeLibrariesMayBeLinked) {
  EXPECT_EQ(refusal({}, {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcufft.so.12", "libstdc++.so.6",
                         "libm.so.6", "libgcc_s.so.1", "libc.so.6", "ld-linux-x86-64.so.2"}),
            "");
  EXPECT_EQ(refusal({}, {"libnccl.so.2"}), "libnccl.so.2: candidates may not call NCCL: the task is to replace it");
  // cuDNN can load serialised execution plans (device code the PTX check never sees): the
  // references' attention uses it, a candidate may not.
  EXPECT_NE(refusal({}, {"libcudnn.so.9"}), "");
  EXPECT_NE(refusal({"cudnnBackendExecute"}), "");
  EXPECT_NE(refusal({}, {"libcurl.so.4"}), "");
}

TEST(Imports, TheAbiFunctionsMustBeExported) {
  EXPECT_EQ(missing_abi_export({{}, {}, {"mgk_setup", "mgk_run", "mgk_teardown"}}), std::nullopt);
  EXPECT_EQ(missing_abi_export({{}, {}, {"mgk_setup", "mgk_teardown"}}), std::optional<std::string>("mgk_run"));
}

TEST(Imports, ReadsARealLibrary) {
  // libstdc++ needs libc and imports from it; it exports (among thousands) std::terminate.
  const char* lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  ASSERT_TRUE(std::filesystem::exists(lib));
  ElfLinkage l = read_linkage(lib);
  EXPECT_NE(std::find(l.needed.begin(), l.needed.end(), "libc.so.6"), l.needed.end());
  EXPECT_NE(std::find(l.imports.begin(), l.imports.end(), "memcpy"), l.imports.end());
  EXPECT_NE(std::find(l.exports.begin(), l.exports.end(), "_ZSt9terminatev"), l.exports.end());
  test::TempDir d("mgk-elf");
  std::ofstream(d.path() / "not.so") << "plain text";
  EXPECT_THROW(read_linkage(d.path() / "not.so"), Error);
}

TEST(Imports, Demangles) {
  EXPECT_EQ(demangle("_ZNSt6thread4joinEv"), "std::thread::join()");
  EXPECT_EQ(demangle("socket"), "socket");
}

}  // namespace
}  // namespace mgk::eval
