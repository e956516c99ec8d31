# The teaching notebooks (notebooks_data/notebooks/NN_*.ipynb), executed top to bottom by
# run_all.py with nbclient on in-memory copies: each re-derives the core's numbers in NumPy and
# asserts them against `deberta dump` (<= 1e-10), so any error or failed assertion fails the test.
# run_all.py also fails when a committed notebook lacks its outputs or exceeds 400 KB. The
# committed files are never rewritten here (`run_all.py --update` does that, by hand).
#
# Needs Debian's python3-nbclient, python3-nbformat, python3-ipykernel, python3-matplotlib and
# python3-numpy (scripts/setup.sh). A missing interpreter is a failing test, not a skipped one.
if(Python3_EXECUTABLE)
  set(_deberta_nb_python ${Python3_EXECUTABLE})
elseif(EXISTS /usr/bin/python3)
  set(_deberta_nb_python /usr/bin/python3)  # Debian's, which has the packages above
else()
  find_program(_deberta_nb_python python3)
endif()

if(_deberta_nb_python)
  add_test(NAME notebooks
           COMMAND ${_deberta_nb_python} ${CMAKE_SOURCE_DIR}/notebooks_data/notebooks/run_all.py)
else()
  message(WARNING "notebooks test: no python3 found; the test will fail")
  add_test(NAME notebooks COMMAND ${CMAKE_COMMAND} -E false)
endif()
# One thread for the kernel and every CLI run; ~30 s of CPU in total on the small models.
set_tests_properties(notebooks PROPERTIES
  ENVIRONMENT "DEBERTA_CLI=$<TARGET_FILE:deberta>;OMP_NUM_THREADS=1"
  TIMEOUT 900
  LABELS notebooks)
