// Checks of the intervalset stand-in against its documented behaviour, run by build_batsim.sh.
#include <intervalset.hpp>
#undef NDEBUG
#include <cassert>
#include <iostream>
int main(){
  IntervalSet s = IntervalSet::from_string_hyphen("3,4-7,10-20,22,24-28");
  assert(s.to_string_hyphen()=="3-7,10-20,22,24-28");
  assert(s.to_string_brackets()=="[3,7]∪[10,20]∪[22]∪[24,28]");
  assert(s.size()==22);
  assert(s.left(7)==IntervalSet::from_string_hyphen("3-7,10-11"));
  assert(s[5]==10 && s[0]==3);
  assert(IntervalSet(*s.biggest_interval())==IntervalSet(IntervalSet::ClosedInterval(10,20)));
  assert(s.contains(IntervalSet::ClosedInterval(5,7)) && !s.contains(IntervalSet::ClosedInterval(9,10)));
  IntervalSet a=IntervalSet::from_string_hyphen("4,19-21,23");
  assert((s-a)==IntervalSet::from_string_hyphen("3,5-7,10-18,22,24-28"));
  assert((s&a)==IntervalSet::from_string_hyphen("4,19-20"));
  assert((s+a)==IntervalSet::from_string_hyphen("3-7,10-28"));
  assert(IntervalSet::ClosedInterval(4,7)==IntervalSet::ClosedInterval(4,7));
  assert(IntervalSet(IntervalSet::ClosedInterval(4,7)).is_subset_of(IntervalSet(IntervalSet::ClosedInterval(0,10))));
  assert(IntervalSet::empty_interval_set().is_empty() && IntervalSet::empty_interval_set().to_string_brackets()=="[]");
  bool threw=false; try{IntervalSet::from_string_hyphen("4-1");}catch(std::invalid_argument&){threw=true;} assert(threw);
  threw=false; try{IntervalSet::from_string_hyphen(",4");}catch(std::invalid_argument&){threw=true;} assert(threw);
  threw=false; try{s.left(23);}catch(std::out_of_range&){threw=true;} assert(threw);
  assert(s.random_pick(5).size()==5 && s.random_pick(5).is_subset_of(s));
  assert(IntervalSet::from_string_hyphen("1 3-5", " ")==IntervalSet::from_string_hyphen("1,3-5"));
  std::cout<<"ok\n";
}
